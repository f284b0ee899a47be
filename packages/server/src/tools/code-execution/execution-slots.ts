/**
 * Bounds how many executions run at once: each is a process of some hundred megabytes and a
 * core's worth of CPU. Past the bound an execution waits its turn, for a while; past that wait
 * the tool answers `too_many_requests` rather than letting the queue grow without end.
 */
export type SlotAnswer = { granted: true; release: () => void } | { granted: false; why: 'busy' | 'aborted' };

interface Waiter {
  grant: () => void;
}

export class ExecutionSlots {
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaitMs: number,
  ) {}

  acquire(signal: AbortSignal): Promise<SlotAnswer> {
    if (signal.aborted) return Promise.resolve({ granted: false, why: 'aborted' });
    if (this.running < this.limit) return Promise.resolve(this.grant());
    return new Promise((resolve) => {
      const settle = (answer: SlotAnswer) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const index = this.queue.indexOf(waiter);
        if (index !== -1) this.queue.splice(index, 1);
        resolve(answer);
      };
      const waiter: Waiter = { grant: () => settle(this.grant()) };
      const onAbort = () => settle({ granted: false, why: 'aborted' });
      const timer = setTimeout(() => settle({ granted: false, why: 'busy' }), this.maxWaitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  private grant(): SlotAnswer {
    this.running += 1;
    let released = false;
    return {
      granted: true,
      release: () => {
        if (released) return;
        released = true;
        this.running -= 1;
        this.queue[0]?.grant();
      },
    };
  }
}
