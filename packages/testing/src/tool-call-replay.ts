/**
 * Replaying the recorded tool-call replies (tool-call-replies.ts) through a service: the engine's
 * deltas cut into other pieces, as engines split a call in odd places (issue 35), and a reply,
 * JSON or SSE, read back as what a client acts on: its calls, its text, its stop reason or its
 * error. The tests and bench/tool-calls.ts compare that with the case's `expected`.
 */
import { parseSse } from './sse.js';
import type { EngineAnswer, ReplyDelta, ToolCallReply } from './tool-call-replies.js';

/** The answer with every content and arguments string cut into pieces of `size` characters. */
export function rechunked(answer: EngineAnswer, size: number): EngineAnswer {
  const deltas: ReplyDelta[] = [];
  for (const delta of answer.deltas) {
    if (delta.content !== undefined) {
      for (const piece of pieces(delta.content, size)) deltas.push({ ...delta, content: piece });
    } else if (delta.tool_calls?.length === 1) {
      const [call] = delta.tool_calls;
      // The id and the name stay on the first piece, as engines send them.
      pieces(call!.function.arguments ?? '', size).forEach((argumentsPiece, at) => {
        const first = at === 0;
        const piece = {
          index: call!.index,
          ...(first && call!.id ? { id: call!.id, type: call!.type } : {}),
          function: {
            ...(first && call!.function.name !== undefined ? { name: call!.function.name } : {}),
            ...(call!.function.arguments !== undefined ? { arguments: argumentsPiece } : {}),
          },
        };
        deltas.push({ tool_calls: [piece] });
      });
    } else deltas.push(delta);
  }
  return { ...answer, deltas };
}

/** `text` in pieces of `size`; an empty text stays one empty piece. */
function pieces(text: string, size: number): string[] {
  if (text === '') return [''];
  const cut: string[] = [];
  for (let at = 0; at < text.length; at += size) cut.push(text.slice(at, at + size));
  return cut;
}

/** What a client acts on in a reply. */
export interface ReplyOutcome {
  calls: Array<[string, Record<string, unknown>]>;
  text: string;
  stopReason: string;
  /** The error's code (mms-error-code). */
  error?: string;
}

/** A JSON reply, read. */
export function jsonReplyOutcome(status: number, headers: Headers, body: Record<string, any>): ReplyOutcome {
  if (status !== 200)
    return { calls: [], text: '', stopReason: 'error', error: headers.get('mms-error-code') ?? String(status) };
  const content = body.content as Array<{
    type: string;
    text?: string;
    name?: string;
    input?: Record<string, unknown>;
  }>;
  return {
    calls: content.filter((block) => block.type === 'tool_use').map((block) => [block.name!, block.input!]),
    text: content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join(''),
    stopReason: body.stop_reason as string,
  };
}

/**
 * An SSE reply, read as a client reads it: a call's input is the JSON of its input_json_delta
 * pieces joined, so a piece lost or sent twice shows.
 */
export function sseReplyOutcome(text: string): ReplyOutcome {
  const blocks = new Map<number, { type: string; name?: string; text: string; json: string }>();
  let stopReason = '';
  for (const { data } of parseSse(text)) {
    if (data.type === 'error') {
      // A stream opens at admission: its error event carries the code its headers could not.
      const code =
        typeof data.mms_error_code === 'string' ? data.mms_error_code : (data.error as { type: string }).type;
      return { calls: [], text: '', stopReason: 'error', error: code };
    }
    const index = data.index as number;
    if (data.type === 'content_block_start') {
      const block = data.content_block as { type: string; name?: string };
      blocks.set(index, { type: block.type, name: block.name, text: '', json: '' });
    } else if (data.type === 'content_block_delta') {
      const delta = data.delta as { type: string; text?: string; partial_json?: string };
      if (delta.type === 'text_delta') blocks.get(index)!.text += delta.text;
      if (delta.type === 'input_json_delta') blocks.get(index)!.json += delta.partial_json;
    } else if (data.type === 'message_delta') stopReason = (data.delta as { stop_reason: string }).stop_reason;
  }
  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
  return {
    calls: ordered
      .filter((block) => block.type === 'tool_use')
      .map((block) => [block.name!, JSON.parse(block.json === '' ? '{}' : block.json) as Record<string, unknown>]),
    text: ordered
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join(''),
    stopReason,
  };
}

/** The case's expected outcome, as a ReplyOutcome. */
export function expectedOutcome(reply: ToolCallReply): ReplyOutcome {
  const { calls, text, stopReason, error } = reply.expected;
  return error === undefined ? { calls, text, stopReason } : { calls, text, stopReason, error };
}
