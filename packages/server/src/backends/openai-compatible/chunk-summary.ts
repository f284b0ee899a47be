/**
 * What converting one engine request's chunks hands the backend at its end
 * (chunk-conversion.ts): the summary of the step, and the items it held back until checked,
 * which held-calls.ts makes good.
 */
import type { InputMembers } from '../call/input-members.js';
import type { OfferedTool } from '../call/model-call.js';
import type { StreamPart } from '../../streaming/stream-part.js';

/** A tool call whose input mms must check before it is released as a block. */
export interface PendingCall {
  type: 'pending-call';
  name: string;
  tool: OfferedTool | undefined;
  arguments: string;
  /**
   * Where the call came from: the engine's calls; the reply's text (leaked-calls/); or the
   * input of the call before it, which the engine ran on with into a second one.
   */
  origin: CallOrigin;
}

export type CallOrigin = 'engine' | 'text' | 'run-on';

/** A call whose block is open, some of its input's members out, that a repair must finish. */
export interface OpenCall {
  type: 'open-call';
  tool: OfferedTool;
  members: InputMembers;
}

export type HeldItem = StreamPart | PendingCall | OpenCall;

/** How a call's input reaches the client (see the file's comment). */
export type InputStreaming = 'guided' | 'members' | 'held';

export interface CallRecord {
  name: string;
  /** Its input JSON as generated. */
  arguments: string;
  streaming: InputStreaming;
}

export interface ChunkSummary {
  /** Parts still to send before the held ones (the closing of the last streamed block). */
  tail: StreamPart[];
  held: HeldItem[];
  finishReason: string | undefined;
  /** The stop string that ended the output, mms-matched or engine-reported. */
  stopString: string | undefined;
  /** Every tool call, with its arguments as generated, those read from the text included. */
  calls: CallRecord[];
  /** The whole text answer (for the format check). */
  text: string;
  completionTokens: number | undefined;
  /** The engine's own count of the prompt (usage.prompt_tokens), where it sent one. */
  promptTokens: number | undefined;
  /** Of those, the tokens its prefix cache held (usage.prompt_tokens_details.cached_tokens). */
  cachedTokens: number | undefined;
  /** Chunks that carried output: a token estimate where the engine sent no usage. */
  outputChunks: number;
}
