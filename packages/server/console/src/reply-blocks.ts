/**
 * The playground's reply as it streams (issue 37): the Messages API's stream events folded into
 * the blocks shown, each growing as its deltas come (text, thinking, a tool's input JSON).
 */

export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use' | 'server_tool_use'; name: string; input: string }
  | { type: 'result'; tool: string; content: unknown };

export interface Reply {
  blocks: ReplyBlock[];
  stopReason: string | null;
  usage: Record<string, unknown> | undefined;
  error: string | undefined;
}

export const EMPTY_REPLY: Reply = { blocks: [], stopReason: null, usage: undefined, error: undefined };

interface StartedBlock {
  type: string;
  text?: string;
  thinking?: string;
  name?: string;
  input?: unknown;
  content?: unknown;
}

/** The reply after one more event (a new object, so that the view renders it). */
export function applyEvent(reply: Reply, event: string, data: string): Reply {
  const body = JSON.parse(data) as Record<string, unknown>;
  switch (event) {
    case 'message_start': {
      const message = body.message as { usage?: Record<string, unknown> };
      return { ...reply, usage: message.usage };
    }
    case 'content_block_start':
      return { ...reply, blocks: [...reply.blocks, startBlock(body.content_block as StartedBlock)] };
    case 'content_block_delta': {
      const blocks = [...reply.blocks];
      const index = blocks.length - 1;
      const block = blocks[index];
      const delta = body.delta as { type: string; text?: string; thinking?: string; partial_json?: string };
      if (block === undefined) return reply;
      if (block.type === 'text' && delta.type === 'text_delta')
        blocks[index] = { ...block, text: block.text + delta.text };
      else if (block.type === 'thinking' && delta.type === 'thinking_delta')
        blocks[index] = { ...block, thinking: block.thinking + delta.thinking };
      else if ((block.type === 'tool_use' || block.type === 'server_tool_use') && delta.type === 'input_json_delta')
        blocks[index] = { ...block, input: block.input + delta.partial_json };
      return { ...reply, blocks };
    }
    case 'message_delta': {
      const delta = body.delta as { stop_reason: string | null };
      return {
        ...reply,
        stopReason: delta.stop_reason,
        usage: { ...reply.usage, ...(body.usage as Record<string, unknown>) },
      };
    }
    case 'error': {
      const error = body.error as { type: string; message: string };
      return { ...reply, error: `${error.type}: ${error.message}` };
    }
    default:
      return reply;
  }
}

function startBlock(block: StartedBlock): ReplyBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text ?? '' };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking ?? '' };
    case 'redacted_thinking':
      return { type: 'thinking', thinking: '(redacted)' };
    case 'tool_use':
    case 'server_tool_use': {
      // The input streams as JSON text; a block that starts with its whole input shows it at once.
      const given = block.input !== undefined && Object.keys(block.input as object).length > 0;
      return { type: block.type, name: block.name ?? '', input: given ? JSON.stringify(block.input) : '' };
    }
    default:
      return { type: 'result', tool: block.type.replace(/_tool_result$/, ''), content: block.content };
  }
}
