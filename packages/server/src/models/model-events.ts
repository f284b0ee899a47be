/**
 * The registry's hub of its models' backend events (backends/backend-events.ts): each event with
 * the model whose backend reported it. The registry holds it because backends are built with the
 * registry, before the app that logs and counts; the app subscribes, and a process may run
 * several apps (tests do), each subscribed to its own registry.
 */
import type { BackendEvent, BackendReport } from '../backends/backend-events.js';

/** A backend's event, with the model it serves. */
export type ModelEvent = BackendEvent extends infer Event
  ? Event extends unknown
    ? Event & { model: string }
    : never
  : never;

export type ModelEventListener = (event: ModelEvent) => void;

export class ModelEvents {
  private readonly listeners = new Set<ModelEventListener>();

  /** Adds a listener; the function returned removes it. */
  subscribe(listener: ModelEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: ModelEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** The report of one model's backends: each event is emitted with the model's id. */
  reportFor(model: string): BackendReport {
    return (event) => this.emit({ ...event, model });
  }
}
