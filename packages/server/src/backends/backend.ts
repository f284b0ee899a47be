/**
 * The one interface every engine implements. The request is already validated and typed; a
 * backend converts it to its own wire format in its own folder and never passes raw JSON on.
 */
import type { ContentBlock, ConversationRequest, MessageRequest, ModelProfile } from '@mms/protocol';
import type { StreamPart } from '../streaming/stream-part.js';
import type { Cancellation } from './cancellation.js';

export interface BackendStepRequest {
  request: MessageRequest;
  model: ModelProfile;
  /** Whether this request thinks (protocol's requestThinks, decided once by the handler). */
  thinks: boolean;
  /** Blocks this turn already produced in earlier steps (server tool calls and their results). */
  turnSoFar: ContentBlock[];
  /** Index of this step within the request's agent loop, from 0. */
  step: number;
  /**
   * Output tokens this step may still spend: max_tokens less what earlier steps spent. At least
   * 1: with nothing left the turn loop ends the turn on max_tokens without asking for a step.
   */
  outputBudget: number;
  /** The `mms-fault` header; only a backend configured for fault injection reads it. */
  fault: string | undefined;
}

export interface Backend {
  /**
   * For logs and the `mms-backend` response header. A request's view from `forRequest` names
   * the backend that answered, once it has.
   */
  readonly name: string;
  /**
   * Optional: a view of this backend for one request, for a backend that chooses among others
   * (a fallback list): the handler counts tokens and runs every step of the turn through it,
   * so that the turn stays on the backend that answered and the header can name it.
   */
  forRequest?(): Backend;
  /**
   * One model step, as batches of parts: whatever the engine had ready at once. Batching keeps
   * the await count per reply low; a streaming engine yields a batch per token or chunk.
   * Must stop promptly when `cancellation` aborts; `cancellation.signal` is the AbortSignal to
   * hand to fetch, timers or an engine.
   */
  stream(step: BackendStepRequest, cancellation: Cancellation): AsyncIterable<StreamPart[]>;
  /** Exact input tokens of the prompt, in the model's own tokenizer. */
  countTokens(request: ConversationRequest, model: ModelProfile): Promise<number>;
  /**
   * Gets the backend ready before the service listens (finds or downloads model files).
   * `progress` shows a progress bar for downloads. Returns what it prepared, for the log.
   */
  prepare(options: { progress: boolean }): Promise<string>;
  close(): Promise<void>;
}
