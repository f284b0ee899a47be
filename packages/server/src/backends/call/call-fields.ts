/**
 * What a backend does with each field of the model call (issue 33): a request field the builder
 * puts in the call is sent to the engine, refused with a 400 naming it, or ignored for a reason
 * the backend's kind states, never dropped without a word. Each kind decides every field
 * (BackendKind.callFields): a Record over the fields, so a field added to the call does not type
 * check until every kind has decided it, and the kinds test reads the decisions.
 */
import type { ModelCall, Sampling, ThinkingSetting } from './model-call.js';

/** A field of the call by its path: `outputBudget`, `sampling.topK`, `passOn.metadata`. */
export type CallField =
  | Exclude<keyof ModelCall, 'sampling' | 'thinking' | 'passOn'>
  | `sampling.${keyof Sampling & string}`
  | `thinking.${keyof ThinkingSetting & string}`
  | `passOn.${keyof ModelCall['passOn'] & string}`;

export type CallFieldUse =
  /**
   * Sent to the engine: put in its request, or, for an engine in process (llama.cpp, the scripted
   * model), honoured where it generates.
   */
  | { use: 'sent' }
  /** Refused with a 400 naming the request's field when the request sets it; `reason` says why. */
  | { use: 'refused'; reason: string }
  /** Left unused; `reason` says why that is right for this engine. */
  | { use: 'ignored'; reason: string };

export type CallFieldUses = Record<CallField, CallFieldUse>;

export const SENT: CallFieldUse = { use: 'sent' };

export function ignored(reason: string): CallFieldUse {
  return { use: 'ignored', reason };
}

export function refused(reason: string): CallFieldUse {
  return { use: 'refused', reason };
}

/**
 * The prompt, which every engine is sent: what it exists to answer (the model's limits, the system
 * prompt, the turns, the tool table, the output target). A kind spreads it, then decides the rest.
 */
export const PROMPT_SENT = {
  model: SENT,
  system: SENT,
  turns: SENT,
  tools: SENT,
  output: SENT,
} as const satisfies Partial<CallFieldUses>;

/** The reasons that hold for every backend: the turn loop applies these fields itself. */
export const APPLIED_BY_THE_TURN_LOOP = {
  display: ignored('the turn loop omits the thinking text for the client, for every backend (agent/step-reader.ts)'),
  singleCall: ignored('the turn loop ends the step after its first call, for every backend (agent/step-reader.ts)'),
} as const;
