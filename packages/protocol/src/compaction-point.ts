/**
 * Where a conversation starts once compacted (context_management `compact_20260112`, issue 34):
 * at the last compaction block with content, as the public API drops every block before it. A
 * compaction block whose content is null stands for a compaction that failed and changes nothing.
 * The server's call builder reads the conversation from here (call-builder/conversation.ts); the
 * endpoint rules check that what is kept stands on its own.
 */
import { ServiceError } from './errors.js';
import type { MessageParam } from './request-schema.js';

export interface CompactionPoint {
  /** The message that holds the block, and the block's place in it. */
  message: number;
  position: number;
  /** What the model wrote of everything before the block. */
  summary: string;
}

export function compactionPoint(messages: readonly MessageParam[]): CompactionPoint | undefined {
  for (let message = messages.length - 1; message >= 0; message -= 1) {
    const content = messages[message]!.content;
    if (!Array.isArray(content)) continue;
    for (let position = content.length - 1; position >= 0; position -= 1) {
      const block = content[position]!;
      if (block.type === 'compaction' && typeof block.content === 'string')
        return { message, position, summary: block.content };
    }
  }
  return undefined;
}

/**
 * Every tool result kept after the compaction point answers a call that is kept too: one whose
 * call the summary took in would reach the model with no call before it.
 */
export function checkCompactionPoint(messages: readonly MessageParam[]): void {
  const point = compactionPoint(messages);
  if (!point) return;
  const kept = new Set<string>();
  for (let index = point.message; index < messages.length; index += 1) {
    const content = messages[index]!.content;
    if (!Array.isArray(content)) continue;
    content.forEach((block, position) => {
      if (index === point.message && position <= point.position) return;
      if (block.type === 'tool_use' || block.type === 'server_tool_use') kept.add(block.id);
      else if ('tool_use_id' in block && !kept.has(block.tool_use_id))
        throw new ServiceError(
          'invalid_request',
          `messages.${index}.content.${position}: this ${block.type} answers the call ${block.tool_use_id}, which stands before the compaction block at messages.${point.message}.content.${point.position}; a compacted conversation keeps only what comes after its compaction block`,
        );
    });
  }
}

/**
 * A final assistant message that ends on a compaction block (a reply that paused after
 * compaction, sent back): the model goes on from the summary, so it is no prefill (rule 4).
 */
export function endsOnCompaction(message: MessageParam | undefined): boolean {
  if (message?.role !== 'assistant' || !Array.isArray(message.content)) return false;
  const last = message.content.at(-1);
  return last?.type === 'compaction' && typeof last.content === 'string';
}
