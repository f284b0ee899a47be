/**
 * Part (a) and (c) of bench/tool-calls.ts: the recorded engine replies
 * (packages/testing/fixtures/tool-call-replies) replayed through a gateway in front of the fake
 * OpenAI engine, folded, streamed, and streamed again in pieces of 1, 2, 3, 5 and 7 characters
 * (engines split calls in odd places), each reply read as a client acts on it and compared with
 * the case's expected calls, text, stop reason or error.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  engineCompletion,
  engineStream,
  expectedOutcome,
  jsonReplyOutcome,
  rechunked,
  sseReplyOutcome,
  toolCallReplies,
  toolsNamed,
  type EngineAnswer,
  type FakeOpenAiEngine,
  type ReplyOutcome,
  type ToolCallReply,
} from '@model-messages/testing';

export const MODES = ['folded', 'streamed', 'pieces of 1', 'pieces of 2', 'pieces of 3', 'pieces of 5', 'pieces of 7'];

/** A gateway under test: where a case's reply is queued, and how a Messages request reaches it. */
export interface Gateway {
  name: string;
  engineFor(reply: ToolCallReply): FakeOpenAiEngine;
  /** Whether mms's repair request is queued: a gateway that never repairs would get it on its next case. */
  repairs: boolean;
  /** Whether a request the client makes without streaming reaches the engine without streaming too. */
  foldsUpstream: boolean;
  post(reply: ToolCallReply, body: Record<string, unknown>): Promise<Response>;
}

export interface CaseResult {
  reply: ToolCallReply;
  /** Modes whose reply was the expected one, of MODES.length. */
  right: number;
  /** What the first wrong mode answered, for the table's notes. */
  firstWrong?: { mode: string; outcome: ReplyOutcome };
}

export async function replayAll(gateway: Gateway): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const reply of toolCallReplies()) {
    const result: CaseResult = { reply, right: 0 };
    for (const mode of MODES) {
      const size = mode.startsWith('pieces of ') ? Number(mode.slice('pieces of '.length)) : undefined;
      const answer: EngineAnswer = size === undefined ? reply : rechunked(reply, size);
      const outcome = await replayOnce(gateway, reply, answer, mode !== 'folded');
      if (isDeepStrictEqual(outcome, expectedOutcome(reply))) result.right += 1;
      else result.firstWrong ??= { mode, outcome };
    }
    results.push(result);
  }
  return results;
}

async function replayOnce(
  gateway: Gateway,
  reply: ToolCallReply,
  answer: EngineAnswer,
  stream: boolean,
): Promise<ReplyOutcome> {
  const engine = gateway.engineFor(reply);
  engine.reply(
    !stream && gateway.foldsUpstream
      ? { json: engineCompletion(reply.engine, answer) }
      : { stream: engineStream(reply.engine, answer) },
  );
  if (reply.repair && gateway.repairs) engine.reply({ stream: engineStream(reply.engine, reply.repair) });
  const response = await gateway.post(reply, {
    max_tokens: 400,
    stream,
    tools: toolsNamed(reply.tools),
    messages: [{ role: 'user', content: 'Go on.' }],
  });
  try {
    if (!stream || !(response.headers.get('content-type') ?? '').includes('text/event-stream'))
      return jsonReplyOutcome(response.status, response.headers, (await response.json()) as Record<string, any>);
    return sseReplyOutcome(await response.text());
  } catch (error) {
    // A reply no client could read is a wrong one, not the end of the benchmark.
    return { calls: [], text: `unreadable reply: ${(error as Error).message}`, stopReason: 'error' };
  } finally {
    // Only once the reply was read whole: a stream's repair request comes after its headers.
    engine.clearReplies();
  }
}
