/**
 * The wall-clock limit of one execution. It counts the sandbox's own time only: while a host
 * function call (a web search or fetch for the code) is in flight the clock stops, because that
 * time is the tool's, bounded by the tool's own limits and the request's max_uses. The
 * execution's overall wall-clock limit (sandbox-process.ts) runs on regardless.
 */
export class PausableDeadline {
  private remainingMs: number;
  private runningSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private holds = 0;
  private stopped = false;

  constructor(
    limitMs: number,
    private readonly onExpired: () => void,
  ) {
    this.remainingMs = limitMs;
    this.resume();
  }

  /** Stops the clock until the returned function is called (holds nest). */
  hold(): () => void {
    this.holds += 1;
    if (this.holds === 1) this.pause();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.holds === 0) this.resume();
    };
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private pause(): void {
    if (this.runningSince === undefined) return;
    clearTimeout(this.timer);
    this.remainingMs -= performance.now() - this.runningSince;
    this.runningSince = undefined;
  }

  private resume(): void {
    if (this.stopped) return;
    this.runningSince = performance.now();
    this.timer = setTimeout(
      () => {
        this.stopped = true;
        this.onExpired();
      },
      Math.max(0, this.remainingMs),
    );
  }
}
