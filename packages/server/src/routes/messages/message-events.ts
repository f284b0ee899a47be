/**
 * A turn's parts as wire events, batch by batch: what the stream writes and the JSON reply
 * folds. The turn runs once the request holds an admission slot; the slot is given back once
 * the turn is over, however it ends: done, failed, or abandoned by its reader (`return`).
 *
 * A hand-written async iterator rather than an async generator: every reply passes through
 * here, and each layer of async generators costs it about 300 ns and 1 KB.
 */
import type { StreamEvent } from '@model-messages/protocol';
import type { Release } from '../../admission/admission-controller.js';
import type { MessageEncoder, MessageSummary } from '../../streaming/message-encoder.js';
import type { StreamPart } from '../../streaming/stream-part.js';

export class MessageEvents implements AsyncIterator<StreamEvent[], undefined> {
  private started = false;
  private over = false;
  /** The slot's release once the request holds one. */
  private release: Release | undefined;
  /** The wait for a slot, while the request is queued. */
  private queued: Promise<Release> | undefined;
  /** `performance.now()` when the turn's first batch arrived: the time to first token's end. */
  firstOutputAt: number | undefined;

  constructor(
    private readonly parts: AsyncIterator<StreamPart[]>,
    private readonly encoder: MessageEncoder,
    /** The admission: a slot held, or the queue's promise of one (admission-controller.ts). */
    slot: Release | Promise<Release>,
  ) {
    if (typeof slot === 'function') this.release = slot;
    else {
      this.queued = slot;
      // A stream writes message_start before it asks for the first batch, and its client may
      // leave the queue meanwhile: the rejection is read by `next` or `return`, never unhandled.
      slot.catch(() => undefined);
    }
  }

  /**
   * message_start on its own, before the turn runs: a stream sends it as soon as the request is
   * admitted, while it waits for its slot or its first output. The first batch then starts
   * without it. Everything message_start says is known by admission: the id, the model, and
   * the input count (the engine's own count, if it reports one, goes in message_delta).
   */
  start(): StreamEvent[] {
    this.started = true;
    return [this.encoder.start()];
  }

  /** The next batch of events; message_start comes with the first, unless `start` gave it. */
  async next(): Promise<IteratorResult<StreamEvent[], undefined>> {
    if (this.over) return { value: undefined, done: true };
    let batch: IteratorResult<StreamPart[]>;
    try {
      // Queued: the turn starts only once a slot is granted; a request that left the queue
      // (its client went away) fails here with the cancellation's reason.
      if (this.release === undefined) this.release = await this.queued;
      batch = await this.parts.next();
    } catch (error) {
      this.end();
      throw error;
    }
    if (batch.done) {
      this.end();
      return { value: undefined, done: true };
    }
    this.firstOutputAt ??= performance.now();
    try {
      return { value: this.encode(batch.value), done: false };
    } catch (error) {
      // A part out of order (a backend bug): the turn is stopped, as a reader that left would.
      await this.return();
      throw error;
    }
  }

  /** The stop reason and usage so far, whatever ended the turn. */
  summary(): MessageSummary {
    return this.encoder.summary();
  }

  /** The reader stops early: the turn is stopped, which stops its generation. */
  async return(): Promise<IteratorResult<StreamEvent[], undefined>> {
    if (this.over) return { value: undefined, done: true };
    this.over = true;
    try {
      await this.parts.return?.();
    } finally {
      // Only once the turn has stopped: a slot given back earlier could let one more generate.
      this.giveBack();
    }
    return { value: undefined, done: true };
  }

  private encode(parts: readonly StreamPart[]): StreamEvent[] {
    const events: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      events.push(this.encoder.start());
    }
    for (const part of parts) this.encoder.encodeInto(part, events);
    return events;
  }

  private end(): void {
    this.over = true;
    this.giveBack();
  }

  private giveBack(): void {
    if (this.release !== undefined) this.release();
    // Still queued: a request that leaves does so through its cancellation (the queue then
    // rejects), but a slot granted in the meantime must still go back, or it is lost for good.
    else
      this.queued?.then(
        (release) => release(),
        () => undefined,
      );
  }
}
