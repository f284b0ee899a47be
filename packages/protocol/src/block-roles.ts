/**
 * Which turn each content block may stand in (issue 31): what the caller gives (images,
 * documents, its tools' results) in a user turn; what the model wrote (thinking, tool calls, and
 * the server tools' calls with their results, which only the service writes) in an assistant
 * turn; text in either. The public API refuses a block in the other turn, and the model call has
 * no place for one there (server call-builder/conversation.ts): a `server_tool_use` block in a
 * user turn passed validation and was a 500 on both routes, found by fuzz. A `system` message
 * holds text only, which its schema says already.
 */
import { ServiceError } from './errors.js';
import type { ContentBlockParam } from './content-block-schema.js';
import type { MessageParam } from './request-schema.js';

type TurnRole = 'user' | 'assistant';

/**
 * Every block type the request schema takes in a turn, and the turns it may stand in. A Record
 * over the schema's types: a block type added to the schema does not compile until it has its
 * place here.
 */
const BLOCK_ROLES: Record<ContentBlockParam['type'], readonly TurnRole[]> = {
  text: ['user', 'assistant'],
  image: ['user'],
  document: ['user'],
  tool_result: ['user'],
  tool_use: ['assistant'],
  thinking: ['assistant'],
  redacted_thinking: ['assistant'],
  server_tool_use: ['assistant'],
  web_search_tool_result: ['assistant'],
  web_fetch_tool_result: ['assistant'],
  code_execution_tool_result: ['assistant'],
  tool_search_tool_result: ['assistant'],
  compaction: ['assistant'],
};

/** Refuses the first block that stands in a turn it may not, naming it by its path. */
export function checkBlockRoles(messages: readonly MessageParam[]): void {
  // Indexed loops: every request passes here, most with nothing to refuse.
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (message.role === 'system' || typeof message.content === 'string') continue;
    for (let position = 0; position < message.content.length; position += 1) {
      const type = message.content[position]!.type;
      const roles = BLOCK_ROLES[type];
      if (!roles.includes(message.role))
        throw new ServiceError(
          'invalid_request',
          `messages.${index}.content.${position}: ${withArticle(type)} block can only appear in ${TURN_NAMES[roles[0]!]}`,
        );
    }
  }
}

const TURN_NAMES: Record<TurnRole, string> = { user: 'a user turn', assistant: 'an assistant turn' };

/** `an image`, `a tool_use`: block types are read as written. */
function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
