/**
 * What backends report beside their replies: the events the log and the metrics are told of.
 * Backends are built with the model registry, before the app that logs and counts exists, so
 * each model's backends report to the registry's hub (models/model-events.ts), which adds the
 * model, and the app subscribes to it (observability/request-observer.ts). Declared here, with
 * the backends, so that a backend reports without importing what observes it (issue 33).
 *
 * No event carries request or response text: names, codes, states and durations only.
 */
import type { CircuitState } from './fallback/circuit-breaker.js';

export type BackendEvent =
  /** A backend's warning (an engine's tokenizer endpoint lost), in its words. */
  | { type: 'warning'; message: string }
  /**
   * A backend of a fallback list failed a request before its first output (`phase`: counting
   * the prompt or generating), and the request moves on to the next backend, if one is left.
   */
  | {
      type: 'fallback';
      requestId: string | undefined;
      backend: string;
      phase: 'count' | 'generate';
      errorCode: string;
    }
  /** A fallback list's circuit for one backend changed state (circuit-breaker.ts). */
  | { type: 'circuit'; backend: string; from: CircuitState; to: CircuitState }
  /**
   * A list's active probe found a backend down (it is tried after the others), or up again
   * (fallback/health-watch.ts, issue 36).
   */
  | { type: 'health'; backend: string; up: boolean }
  /**
   * Schema-bound output failed its check and was generated once more (call/output-check.ts):
   * the one request a backend sends its engine again for the same output.
   */
  | { type: 'regeneration'; backend: string; output: RegeneratedOutput }
  /** A model loaded into an embedded engine (llama-cpp, on first use). */
  | { type: 'model-load'; backend: string; seconds: number }
  /** A model file downloaded (llama-cpp, while the service starts). */
  | { type: 'model-download'; backend: string; source: string; seconds: number };

/** What was generated again: a tool call's input, or an `output_config.format` answer. */
export type RegeneratedOutput = 'tool_input' | 'format_answer';

/** Where one model's backends report (the registry binds it to the model). */
export type BackendReport = (event: BackendEvent) => void;
