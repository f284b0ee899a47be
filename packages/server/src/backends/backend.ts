/**
 * The one interface every engine implements. A backend receives the model call (call/model-call.ts),
 * built once per step from the validated request, and maps it to its engine's format in its own
 * folder; it never reads the wire request, so every engine is told the same things.
 */
import type { StreamPart } from '../streaming/stream-part.js';
import type { Cancellation } from './cancellation.js';
import type { ModelCall, ModelPrompt } from './call/model-call.js';

export type TokenCountPurpose = 'exact' | 'admission';

export interface Backend {
  /**
   * For logs and the `mms-backend` response header. A request's view from `forRequest` names
   * the backend that answered, once it has.
   */
  readonly name: string;
  /**
   * Optional: gen_ai.provider.name in traces, the engine as the GenAI conventions name a provider:
   * the factory hands each backend its kind's (BackendKind.telemetryName; issue 33), and a
   * fallback list's request view gives the one of the backend that answered. Left out (a
   * program's own backend), traces name the provider by `name`.
   */
  readonly telemetryName?: string;
  /**
   * Optional: a view of this backend for one request, for a backend that chooses among others
   * (a fallback list): the handler counts tokens and runs every step of the turn through it,
   * so that the turn stays on the backend that answered and the header can name it.
   */
  forRequest?(routing: RequestRouting): Backend;
  /**
   * One model step, as batches of parts: whatever the engine had ready at once. Batching keeps
   * the await count per reply low; a streaming engine yields a batch per token or chunk.
   * Must stop promptly when `cancellation` aborts; `cancellation.signal` is the AbortSignal to
   * hand to fetch, timers or an engine.
   */
  stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]>;
  /**
   * Input tokens of the prompt. `exact` (count_tokens): in the model's own tokenizer. `admission`
   * (a message request, before it runs: its `message_start` and context check): a backend may
   * answer an estimate instead, where no prompt of this size can exceed the model's context
   * window and its engine reports the exact count in its usage, which the final usage then
   * carries (an `input-tokens` part).
   */
  countTokens(prompt: ModelPrompt, purpose: TokenCountPurpose): Promise<number>;
  /**
   * Optional: true when `countTokens` counts in the model's own tokenizer in process, so that an
   * exact count costs no round trip (llama-cpp). A turn then counts its prompt, its own blocks
   * included, as it appends server tool results, so that a paused turn sent back fits the window
   * (agent/context-budget.ts, issue 32); otherwise results are counted at 4 characters a token,
   * the spec's rule. Left out where an exact count is a round trip (an engine's tokenizer
   * endpoint, an upstream's count_tokens) or is a test double's (scripted), and by a fallback
   * list's view, whose members may tokenize differently.
   */
  readonly countsTokensInProcess?: boolean;
  /**
   * Gets the backend ready before the service listens (finds or downloads model files).
   * `progress` shows a progress bar for downloads. Returns what it prepared, for the log.
   */
  prepare(options: { progress: boolean }): Promise<string>;
  /**
   * Loads what answering needs into memory (a llama-cpp backend's model), so that no request
   * waits for it: `mms serve` calls it once listening, for every model with `load: "eager"`.
   * Rejects with the cause, naming the model and its file. The others hold nothing to load.
   */
  load(): Promise<void>;
  /**
   * Whether a request would be answered now, for GET /ready: one entry, or one per backend of a
   * fallback list. A backend in front of another server probes it (readiness-probe.ts).
   */
  readiness(): Promise<BackendReadiness[]>;
  close(): Promise<void>;
}

/**
 * What a list's per-request view is told of its request (issue 36), never the wire request
 * itself: the handler builds it from what it read (call-builder/conversation-key.ts).
 */
export interface RequestRouting {
  /** Names the request in what the view reports (backend-events.ts). */
  readonly requestId: string | undefined;
  /**
   * The conversation the request continues, the same on every turn of it: asked only by a list
   * that keeps a conversation on one backend (`balance: "session"`), since working it out may
   * read the conversation's whole prefix.
   */
  conversationKey(): string;
}

/** What GET /ready says of one backend. Never an address or a key: /ready needs no key. */
export interface BackendReadiness {
  /** The backend's name; in a fallback list, its label there. */
  backend: string;
  ready: boolean;
  /** In a few words: `loaded`, `loading`, `reachable`, `unreachable`, `answered 503`, ... */
  state: string;
  /** A list's member only: its circuit (fallback/circuit-breaker.ts). */
  circuit?: 'closed' | 'open' | 'half-open';
  /** A list's member only: its requests in flight from this replica of mms. */
  inFlight?: number;
}
