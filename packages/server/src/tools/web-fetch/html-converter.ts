/**
 * HTML -> markdown off the event loop. The conversion (html-to-markdown.ts) is synchronous and
 * costs about 2 s a megabyte, and web fetch reads pages up to `maxBytes` (10 MB by default): on
 * the main thread an 8.8 MB page held every other request, /health included, for 19 s. So it
 * runs in worker threads, started when first needed and then kept warm (a start costs about
 * half a second from the sources, tsx included, against tens of milliseconds for a common page). A page waits
 * for a free worker; a conversion over its time limit, or one whose request was aborted, ends
 * its worker (synchronous code cannot be stopped any other way), and the next page starts a
 * fresh one.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../runtime/start-worker.js';
import type { ConversionReply } from './conversion-thread.js';
import { FetchFailure } from './fetch-page.js';
import type { PageText } from './html-to-markdown.js';

export interface HtmlConverterOptions {
  /** Longest one page may take to convert, not counting a worker's start or the wait for one. */
  timeLimitMs: number;
  /** Workers at most, each converting one page at a time. */
  workers: number;
}

interface Job {
  html: string;
  signal: AbortSignal;
  settle(outcome: { page: PageText } | { error: unknown }): void;
}

export class HtmlConverter {
  private readonly slots: WorkerSlot[];
  private readonly waiting: Job[] = [];
  private closed = false;

  constructor(private readonly options: HtmlConverterOptions) {
    this.slots = Array.from({ length: options.workers }, () => new WorkerSlot(options.timeLimitMs, () => this.next()));
  }

  /**
   * The page's title and markdown. Rejects with a FetchFailure (`url_not_accessible`) when the
   * conversion fails or runs past its time limit, and with the signal's reason when aborted.
   */
  convert(html: string, signal: AbortSignal): Promise<PageText> {
    if (this.closed) return Promise.reject(new Error('the HTML converter is closed'));
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<PageText>((resolve, reject) => {
      const abandon = () => {
        const queued = this.waiting.indexOf(job);
        if (queued >= 0) this.waiting.splice(queued, 1);
        else this.slots.find((slot) => slot.holds(job))?.abandon();
        job.settle({ error: signal.reason });
        this.next();
      };
      let settled = false;
      const job: Job = {
        html,
        signal,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          signal.removeEventListener('abort', abandon);
          if ('page' in outcome) resolve(outcome.page);
          else reject(outcome.error);
        },
      };
      signal.addEventListener('abort', abandon, { once: true });
      this.waiting.push(job);
      this.next();
    });
  }

  /** Ends every worker; pages still waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.settle({ error: new Error('the HTML converter is closed') });
    await Promise.all(this.slots.map((slot) => slot.close()));
  }

  /** Hands waiting pages to free workers. */
  private next(): void {
    for (const slot of this.slots) {
      if (this.waiting.length === 0 || this.closed) return;
      if (!slot.busy) slot.run(this.waiting.shift()!);
    }
  }
}

/** One worker thread, started when first needed, and the page it is converting. */
class WorkerSlot {
  private worker: Worker | undefined;
  private ready = false;
  private job: Job | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeLimitMs: number,
    private readonly freed: () => void,
  ) {}

  get busy(): boolean {
    return this.job !== undefined;
  }

  holds(job: Job): boolean {
    return this.job === job;
  }

  run(job: Job): void {
    this.job = job;
    const worker = this.worker ?? this.start();
    worker.postMessage(job.html);
    if (this.ready) this.startClock();
  }

  /** The page's request was aborted: its worker is ended (the caller settles the job). */
  abandon(): void {
    this.end();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.job?.settle({ error: new Error('the HTML converter is closed') });
    this.end();
    await worker?.terminate();
  }

  private start(): Worker {
    // The worker must not keep a service that is shutting down alive, and a page in progress
    // belongs to a request that already does.
    const worker = startWorker(import.meta.url, 'conversion-thread');
    worker.unref();
    this.worker = worker;
    this.ready = false;
    worker.on('message', (reply: ConversionReply) => {
      if (this.worker !== worker) return;
      if (reply.type === 'ready') {
        this.ready = true;
        if (this.job) this.startClock();
        return;
      }
      this.finish(
        reply.type === 'converted'
          ? { page: { title: reply.title, text: reply.text } }
          : { error: unreadable(`converting the page failed: ${reply.message}`) },
      );
    });
    // A worker that fails to start or dies (out of memory, say) takes its page with it.
    worker.on('error', (error) => this.lose(worker, error.message));
    worker.on('exit', (code) => this.lose(worker, `the conversion worker exited with code ${code}`));
    return worker;
  }

  private startClock(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const job = this.job;
      this.end();
      // A page too costly to convert is, for the model, a page that cannot be read.
      job?.settle({ error: unreadable(`converting the page took longer than ${this.timeLimitMs} ms`) });
      this.freed();
    }, this.timeLimitMs);
  }

  private finish(outcome: { page: PageText } | { error: unknown }): void {
    clearTimeout(this.timer);
    const job = this.job;
    this.job = undefined;
    job?.settle(outcome);
    this.freed();
  }

  private lose(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.finish({ error: unreadable(why) });
  }

  /** Ends the worker and forgets the page: the next page starts a fresh worker. */
  private end(): void {
    clearTimeout(this.timer);
    const worker = this.worker;
    this.worker = undefined;
    this.job = undefined;
    void worker?.terminate();
  }
}

function unreadable(why: string): FetchFailure {
  return new FetchFailure('url_not_accessible', why);
}
