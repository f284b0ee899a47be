/**
 * Where a turn's server call ids are made (issue 32): once a step's calls have their results,
 * each id is signed over the conversation before the turn, the turn's blocks before the call and
 * the call's own result (server-call-id.ts), and the result is given the same id to answer. The
 * step reader holds a step's blocks from its first server call on until then (agent/step-reader.ts).
 * signed-blocks-check.ts verifies a paused turn sent back the same way.
 */
import type {
  ContentBlock,
  ContentBlockParam,
  MessageParam,
  ServerToolResultBlock,
  ServerToolUseBlock,
} from '@model-messages/protocol';
import { signedServerCallId } from './server-call-id.js';
import type { Signer } from './signer.js';
import { contentBlocks, conversationDigest, resultDigest, TurnDigest } from './turn-digest.js';

/** What comes before the blocks a reply adds to its turn. */
export interface TurnStart {
  /** The digest of the messages before the turn (turn-digest.ts). */
  conversation: string;
  /** The paused turn the request resumes: its final assistant message, to which a client appends the reply's blocks. */
  resumed: readonly ContentBlockParam[];
}

/** Where the turn a request's reply continues begins. */
export function turnStartOf(messages: readonly MessageParam[]): TurnStart {
  const last = messages.at(-1);
  if (last?.role !== 'assistant') return { conversation: conversationDigest(messages), resumed: [] };
  return { conversation: conversationDigest(messages.slice(0, -1)), resumed: contentBlocks(last.content) };
}

/**
 * Signs one turn's server calls, step by step. The digest of the turn runs on as its blocks
 * become final, each block added once: a call's block is final once it is signed, its result
 * once it answers the signed id, so the digest reaches only up to the call being signed, and a
 * step's results join it when a later step's calls are signed.
 */
export class ServerCallSigner {
  private readonly digest: TurnDigest;
  /** How many of the turn's blocks the digest holds. */
  private digested = 0;

  constructor(
    private readonly signer: Signer,
    messages: readonly MessageParam[],
  ) {
    const start = turnStartOf(messages);
    this.digest = new TurnDigest(start.conversation);
    for (const block of start.resumed) this.digest.add(block);
  }

  /**
   * Gives each of `calls` (a step's server calls in order, each one of `turn`'s blocks) its
   * signed id, and `results` (in the calls' order) the same `tool_use_id`. Calls are signed in
   * order, so that a later call's digest holds the earlier calls' final ids.
   */
  sign(
    turn: readonly ContentBlock[],
    calls: readonly ServerToolUseBlock[],
    results: readonly ServerToolResultBlock[],
  ): void {
    calls.forEach((call, index) => {
      const result = results[index]!;
      for (const at = turn.indexOf(call); this.digested < at; this.digested += 1) this.digest.add(turn[this.digested]!);
      const id = signedServerCallId(this.signer, call, { before: this.digest.value(), result: resultDigest(result) });
      call.id = id;
      result.tool_use_id = id;
    });
  }
}
