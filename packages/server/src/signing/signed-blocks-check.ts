/**
 * The checks on the way in that need the signing key, so that they live in the service and not
 * in the protocol package (the calling client cannot verify; it checks shapes only). Run by the
 * messages and count_tokens routes after parsing and the endpoint rules:
 *
 * - Every thinking block carries a signature this service made for its text (thinking-signature.ts).
 *   `redacted_thinking` is not checked: this service never returns one, and no engine of it reads
 *   one; a Messages upstream gets it as it came and checks its own.
 * - Rule 4's paused-turn exception (docs/decisions/0006) holds only for a turn this service paused:
 *   the protocol's rule sees a final assistant turn that ends on a server tool's result; here every
 *   server_tool_use in it must carry an id made for that call, after the conversation and the
 *   blocks before it, answered by the result the turn holds for it (server-call-id.ts, issue 32),
 *   every result must answer one of those calls, once, and nothing but results may follow the last
 *   call. Otherwise it is a prefill, refused with tool use.
 * - Web search results whose content verifies become readable to the model
 *   (search-content.ts); others stay unreadable, and are not refused.
 * - Every compaction block with a summary carries a signature this service made for it
 *   (compaction-signature.ts, issue 34): the model reads the summary in place of the conversation
 *   before it. A final assistant message that ends on one is no paused turn: the model goes on
 *   from the summary.
 */
import {
  endsOnCompaction,
  ServiceError,
  usesTools,
  type ContentBlockParam,
  type ConversationRequest,
} from '@model-messages/protocol';
import { compactionSignatureVerifies } from './compaction-signature.js';
import { isServerResultType } from '../tool-kinds/server-tool-kinds.js';
import { admitSearchResults } from './search-content.js';
import { serverCallIdVerifies } from './server-call-id.js';
import { turnStartOf } from './server-call-signing.js';
import type { Signer } from './signer.js';
import { thinkingSignatureVerifies } from './thinking-signature.js';
import { resultDigest, TurnDigest } from './turn-digest.js';

export function checkSignedBlocks(request: ConversationRequest, signer: Signer): void {
  // Indexed loops rather than callbacks or entries(): every request passes here, most with
  // nothing to check.
  const messages = request.messages;
  for (let index = 0; index < messages.length; index += 1) {
    const content = messages[index]!.content;
    if (typeof content === 'string' || content === undefined) continue;
    for (let position = 0; position < content.length; position += 1) {
      const block = content[position]!;
      if (block.type === 'thinking' && !thinkingSignatureVerifies(signer, block.thinking, block.signature))
        throw new ServiceError(
          'invalid_request',
          `messages.${index}.content.${position}: the thinking block's signature does not verify; send thinking blocks back exactly as this service returned them`,
        );
      if (block.type === 'web_search_tool_result') admitSearchResults(block.content, signer);
      if (
        block.type === 'compaction' &&
        typeof block.content === 'string' &&
        !compactionSignatureVerifies(signer, block.content, block.signature ?? '')
      )
        throw new ServiceError(
          'invalid_request',
          `messages.${index}.content.${position}: the compaction block's signature does not verify; send compaction blocks back exactly as this service returned them`,
        );
    }
  }
  const index = request.messages.length - 1;
  const last = request.messages[index];
  // Without tool use a final assistant turn is a prefill, which rule 4 allows: nothing to verify.
  if (!usesTools(request) || last?.role !== 'assistant' || typeof last.content === 'string' || endsOnCompaction(last))
    return;
  const problem = pausedTurnProblem(last.content, signer, turnStartOf(request.messages).conversation);
  if (problem)
    throw new ServiceError(
      'rule_refused',
      `Rule 4: a prefill (a final assistant turn) cannot be combined with tool use, and messages.${index} is not a turn this service paused: messages.${index}.content.${problem}; send a paused turn back exactly as it was returned, or end the messages on a user turn`,
    );
}

/**
 * Where and why `blocks` are not a turn this service paused after the conversation whose digest
 * is `conversation`, or undefined when they are.
 */
function pausedTurnProblem(
  blocks: readonly ContentBlockParam[],
  signer: Signer,
  conversation: string,
): string | undefined {
  const before = new TurnDigest(conversation);
  const unanswered = new Set<string>();
  let lastCall = -1;
  for (const [position, block] of blocks.entries()) {
    if (block.type === 'server_tool_use') {
      const result = blocks.find(
        (candidate, at) => at > position && isServerResultType(candidate.type) && answers(candidate) === block.id,
      );
      if (result === undefined)
        return `${position}: the server_tool_use block has no result after it in this turn; a paused turn holds every call's result`;
      const place = { before: before.value(), result: resultDigest(result as { type: string; content?: unknown }) };
      if (!serverCallIdVerifies(signer, block.id, block, place))
        return `${position}: the server_tool_use block's id does not verify: this service made no such call, answered by that result, after this conversation and the blocks before it`;
      unanswered.add(block.id);
      lastCall = position;
    } else if (isServerResultType(block.type)) {
      if (!unanswered.delete(answers(block)))
        return `${position}: the ${block.type} block answers no unanswered server_tool_use before it in this turn`;
    }
    before.add(block);
  }
  // Each call's id covers the blocks before it and its result: words after the last call are
  // covered by none, so a paused turn has only that call's results after it.
  const after = blocks.findIndex((block, position) => position > lastCall && !isServerResultType(block.type));
  if (after >= 0)
    return `${after}: a ${blocks[after]!.type} block after the turn's last server_tool_use; a paused turn ends on its calls' results`;
  return undefined;
}

function answers(block: ContentBlockParam): string {
  return (block as { tool_use_id: string }).tool_use_id;
}
