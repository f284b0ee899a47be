/**
 * What backends report beside their replies: the events the log and the metrics are told of
 * (request-observer.ts); the keys' limiter reports its store's state the same way. Backends are built with the registry, before the app that logs and
 * counts exists, so the registry holds this hub and the app subscribes to it; a process may run
 * several apps (tests do), each subscribed to its own registry.
 *
 * No event carries request or response text: names, codes, states and durations only.
 */
import type { CircuitState } from '../backends/fallback/circuit-breaker.js';

export type ServiceEvent =
  /** A backend's warning (an engine's tokenizer endpoint lost), in its words. */
  | { type: 'warning'; model: string; message: string }
  /**
   * A backend of a fallback list failed a request before its first output (`phase`: counting
   * the prompt or generating), and the request moves on to the next backend, if one is left.
   */
  | {
      type: 'fallback';
      model: string;
      requestId: string | undefined;
      backend: string;
      phase: 'count' | 'generate';
      errorCode: string;
    }
  /** A fallback list's circuit for one backend changed state (circuit-breaker.ts). */
  | { type: 'circuit'; model: string; backend: string; from: CircuitState; to: CircuitState }
  /**
   * Schema-bound output failed its check and was generated once more (call/output-check.ts):
   * the one request a backend sends its engine again for the same output.
   */
  | { type: 'regeneration'; model: string; backend: string; output: RegeneratedOutput }
  /** A model loaded into an embedded engine (llama-cpp, on first use). */
  | { type: 'model-load'; model: string; backend: string; seconds: number }
  /** A model file downloaded (llama-cpp, while the service starts). */
  | { type: 'model-download'; model: string; backend: string; source: string; seconds: number }
  /**
   * The store of the keys' limits (Redis) stopped answering, or answered again (limits/key-limiter.ts);
   * `detail`: the failure, which names no key.
   */
  | {
      type: 'limit-store';
      state: 'unreachable' | 'reachable';
      onStoreError: 'allow' | 'refuse';
      detail: string | undefined;
    };

/** What was generated again: a tool call's input, or an `output_config.format` answer. */
export type RegeneratedOutput = 'tool_input' | 'format_answer';

/** An event as a backend reports it: the registry adds the model it serves. */
export type BackendEvent = DistributiveOmit<ServiceEvent, 'model'>;

/** Where one model's backends report (the registry binds it to the model). */
export type BackendReport = (event: BackendEvent) => void;

type DistributiveOmit<Union, Key extends PropertyKey> = Union extends unknown ? Omit<Union, Key> : never;

export type ServiceEventListener = (event: ServiceEvent) => void;

export class ServiceEvents {
  private readonly listeners = new Set<ServiceEventListener>();

  /** Adds a listener; the function returned removes it. */
  subscribe(listener: ServiceEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: ServiceEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** The report of one model's backends: each event is emitted with the model's id. */
  reportFor(model: string): BackendReport {
    return (event) => this.emit({ ...event, model } as ServiceEvent);
  }
}
