/**
 * Large request bodies are parsed off the event loop. JSON.parse of a 32 MB body takes from a
 * few tens of milliseconds (one long string) to seconds and gigabytes (sixteen million tiny
 * values), and on the loop every other request, `/health` included, waits for it. A worker
 * scans the text against the JSON bounds (protocol's json-bounds.ts) before it parses, so a
 * body past them costs the loop nothing; a body within them comes back as a value, whose copy
 * into this thread costs about what parsing it here would for a long string, and far less than
 * parsing a body of many values did, since it holds at most MAX_JSON_VALUES.
 *
 * Two workers at most, started when first needed and then kept warm (a start costs about half
 * a second from the sources, tsx included); bodies wait for a free one in arrival order. A worker that dies
 * (out of memory, say) takes its body with it, a 500, and the next body starts a fresh one.
 */
import type { Worker } from 'node:worker_threads';
import { ServiceError } from '@model-messages/protocol';
import { startWorker } from '../runtime/start-worker.js';
import type { ParseReply } from './json-parse-thread.js';

const WORKERS = 2;

interface Job {
  /** The body's pieces, in order. */
  pieces: ArrayBuffer[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

class JsonBodyParser {
  private readonly slots = Array.from({ length: WORKERS }, () => new WorkerSlot(() => this.next()));
  private readonly waiting: Job[] = [];

  /**
   * The body whose bytes are `pieces`, in order. They are handed over: their memory moves to the
   * worker, and the caller must not read them again.
   */
  parse(pieces: ArrayBuffer[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ pieces, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    for (const slot of this.slots) {
      if (this.waiting.length === 0) return;
      if (!slot.busy) slot.run(this.waiting.shift()!);
    }
  }
}

class WorkerSlot {
  private worker: Worker | undefined;
  private job: Job | undefined;

  constructor(private readonly freed: () => void) {}

  get busy(): boolean {
    return this.job !== undefined;
  }

  run(job: Job): void {
    this.job = job;
    const worker = this.worker ?? this.start();
    worker.postMessage(job.pieces, job.pieces);
  }

  private start(): Worker {
    const worker = startWorker(import.meta.url, 'json-parse-thread');
    this.worker = worker;
    worker.on('message', (reply: ParseReply) => {
      if (reply.type === 'ready') return;
      if (reply.type === 'parsed') this.finish((job) => job.resolve(reply.value));
      else if (reply.code === 'internal') this.finish((job) => job.reject(new Error(reply.message)));
      else this.finish((job) => job.reject(new ServiceError(reply.code, reply.message)));
    });
    worker.on('error', (error) => this.lose(worker, error.message));
    worker.on('exit', (code) => this.lose(worker, `exited with code ${code}`));
    // A body being parsed belongs to a request, which keeps the service alive on its own; an idle
    // worker must not. After the listeners: adding a 'message' listener refs a worker again.
    worker.unref();
    return worker;
  }

  private finish(settle: (job: Job) => void): void {
    const job = this.job;
    this.job = undefined;
    if (job) settle(job);
    this.freed();
  }

  private lose(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.finish((job) => job.reject(new Error(`the JSON parse worker failed: ${why}`)));
  }
}

/** One for the process: its workers serve every app in it, and hold nothing of any. */
export const jsonBodyParser = new JsonBodyParser();
