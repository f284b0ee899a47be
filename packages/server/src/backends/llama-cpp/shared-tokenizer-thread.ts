/**
 * The process's one tokenizer thread (tokenizer-thread.ts), shared by the prompt tokenizers of
 * every model file. Starting one costs about 1.5 s of CPU: node-llama-cpp is loaded again in the
 * thread, and on Linux it first forks a process to check that its binary loads. One thread per
 * file paid that for each file, and again each time a file's models were loaded anew.
 *
 * Started by the first long prompt; it tokenizes the files' prompts in arrival order. A file's
 * vocabulary is loaded in the thread by its first prompt and dropped when the last tokenizer of
 * the file closes. The thread itself stays (it never keeps the process alive): a process that
 * loads models again (a service started after another, as the tests do) would start it again.
 * A thread that fails takes the prompts waiting on it with it (a 500), and the next long prompt
 * starts a fresh one.
 */
import type { Worker } from 'node:worker_threads';
import type { Token } from 'node-llama-cpp';
import { startWorker } from '../../runtime/start-worker.js';
import type { Tokenizable, TokenizerReply, TokenizerRequest } from './tokenizer-thread.js';

interface Pending {
  owner: object;
  resolve: (tokens: Token[]) => void;
  reject: (error: Error) => void;
}

class TokenizerThread {
  private worker: Worker | undefined;
  private started: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /** Tokenizers open, by model file. */
  private readonly users = new Map<string, number>();

  /** A tokenizer of `modelPath` opens: its vocabulary is kept in the thread until the last one closes. */
  hold(modelPath: string): void {
    this.users.set(modelPath, (this.users.get(modelPath) ?? 0) + 1);
  }

  /**
   * `owner` closes: what it still waits for is failed ("the tokenizer was closed"), and when it was
   * the last tokenizer of `modelPath`, the thread drops the file's vocabulary.
   */
  letGo(owner: object, modelPath: string): void {
    for (const [id, pending] of this.pending)
      if (pending.owner === owner) {
        this.pending.delete(id);
        pending.reject(new Error('the tokenizer worker failed: the tokenizer was closed'));
      }
    const users = (this.users.get(modelPath) ?? 1) - 1;
    if (users > 0) {
      this.users.set(modelPath, users);
      return;
    }
    this.users.delete(modelPath);
    this.worker?.postMessage({ release: modelPath } satisfies TokenizerRequest);
  }

  /** The tokens of `what` in the vocabulary of `modelPath`, for `owner`, a tokenizer of the file. */
  async tokenize(owner: object, modelPath: string, what: Tokenizable): Promise<Token[]> {
    const worker = await this.ready();
    const id = (this.nextId += 1);
    return new Promise<Token[]>((resolve, reject) => {
      this.pending.set(id, { owner, resolve, reject });
      worker.postMessage({ id, modelPath, ...what } satisfies TokenizerRequest);
    });
  }

  /** The running thread's id, or undefined: for the tests. */
  threadId(): number | undefined {
    return this.worker?.threadId;
  }

  private ready(): Promise<Worker> {
    this.started ??= new Promise<Worker>((resolve, reject) => {
      const worker = startWorker(import.meta.url, 'tokenizer-thread');
      this.worker = worker;
      worker.on('message', (reply: TokenizerReply) => {
        if (reply.type === 'ready') resolve(worker);
        else this.settle(reply);
      });
      worker.on('error', (error) => {
        reject(error);
        this.lose(worker, error.message);
      });
      worker.on('exit', (code) => {
        reject(new Error(`the tokenizer worker exited with code ${code} before it was ready`));
        this.lose(worker, `exited with code ${code}`);
      });
      // An idle thread must not keep the service alive. After the listeners: adding a 'message'
      // listener refs a worker again.
      worker.unref();
    });
    return this.started;
  }

  private settle(reply: Exclude<TokenizerReply, { type: 'ready' }>): void {
    const pending = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    if (reply.type === 'tokenized') pending?.resolve(Array.from(reply.tokens) as Token[]);
    else pending?.reject(new Error(`tokenizing the prompt failed: ${reply.message}`));
  }

  /** Fails every prompt waiting on `worker`; the next one starts a fresh thread. */
  private lose(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.started = undefined;
    for (const pending of this.pending.values()) pending.reject(new Error(`the tokenizer worker failed: ${why}`));
    this.pending.clear();
  }
}

export const tokenizerThread = new TokenizerThread();
