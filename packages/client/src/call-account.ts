/** What one call spent over all its layers: attempts, request ids, usage; and its results. */
import type { Usage } from '@model-messages/protocol';
import { addUsage, emptyUsage, type CallFailure, type CallRecord, type CallSuccess } from './results.js';

/** A failure's own fields, without the record every result carries. */
export type FailureDetail = CallFailure extends infer Failure
  ? Failure extends CallFailure
    ? Omit<Failure, keyof CallRecord | 'ok'>
    : never
  : never;

export class CallAccount {
  model = '';
  readonly usage = emptyUsage();
  readonly requestIds: string[] = [];
  attempts = 0;
  /**
   * Whether the call spent its one retry of a 2xx whose body could not be read. Spec, Client
   * retry policy 2: "retried at most once", however the call's requests are layered (guardrail
   * retry, research passes): issue 32.
   */
  unreadableRetrySpent = false;

  /** Counts one HTTP attempt. */
  attempt(model: string, requestId: string | undefined, usage: Partial<Usage> | undefined): void {
    this.model = model;
    this.attempts += 1;
    if (requestId !== undefined) this.requestIds.push(requestId);
    addUsage(this.usage, usage);
  }

  record(): CallRecord {
    return { model: this.model, usage: { ...this.usage }, requestIds: [...this.requestIds], attempts: this.attempts };
  }

  success<Value>(value: Value, failure?: CallFailure): CallSuccess<Value> {
    return {
      ok: true,
      value,
      source: failure ? 'fallback' : 'model',
      ...(failure ? { failure } : {}),
      ...this.record(),
    };
  }

  failure(detail: FailureDetail): CallFailure {
    return { ok: false, ...detail, ...this.record() } as CallFailure;
  }
}
