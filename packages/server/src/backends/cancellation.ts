/**
 * A request's cancellation: aborted when its client goes away. It hands a real AbortSignal
 * (for fetch, timers, node-llama-cpp, the server tools) only to the code that asks for one.
 *
 * Why not an AbortSignal from the start: on Node 20 making one costs about 3 µs (an
 * EventTarget whose prototype is swapped), and every property read on it stays slow after. A
 * request on the scripted backend never needs one: the turn loop, admission and the backend
 * only ask "aborted yet?". Passing a shared signal in place of a new one per request raised
 * `npm run bench` by 13 %, about a tenth of the service's own work per request.
 */
export class Cancellation {
  private controller: AbortController | undefined;
  private cancelled = false;
  private cause: unknown;
  private listeners: ((reason: unknown) => void)[] | undefined;

  get aborted(): boolean {
    return this.cancelled;
  }

  /** Why it was aborted; undefined until it is. */
  get reason(): unknown {
    return this.cause;
  }

  /**
   * Calls `listener` with the reason once aborted (at once, if it is already), without making an
   * AbortSignal; returns the function that stops listening. For code that keeps its own
   * AbortController (the engine client's, which its time limits abort too): following this
   * cancellation so costs less than joining two signals with AbortSignal.any, which on Node 20
   * is slow (weak references and a finalization registry per signal).
   */
  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.cancelled) {
      listener(this.cause);
      return () => {};
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const index = this.listeners?.indexOf(listener) ?? -1;
      if (index >= 0) this.listeners!.splice(index, 1);
    };
  }

  /** Throws the reason once aborted, as AbortSignal.throwIfAborted does. */
  throwIfAborted(): void {
    if (this.cancelled) throw this.cause;
  }

  /** Aborts once; a later call changes nothing. Without a reason, an AbortError as AbortController gives. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.cause = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) listener(reason);
  }

  /** An AbortSignal that follows this cancellation (aborted already, if it is), made on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort(this.cause);
    }
    return this.controller.signal;
  }
}
