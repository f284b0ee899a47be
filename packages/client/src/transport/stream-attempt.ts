/**
 * One HTTP attempt: POST the request with `stream: true`, read the SSE body as it arrives and
 * fold it into a message, under the attempt's timers. Never throws for what the network or the
 * service does: every ending is an AttemptOutcome, for the retry ladder to judge.
 */
import { SseParser, type Message, type Usage } from '@model-messages/protocol';
import type { AttemptTimers } from '../deadline.js';
import { AttemptClock, type AttemptPhase } from './attempt-clock.js';
import { MessageFolder, StreamErrorEvent, StreamProtocolError, type FoldedMessage } from './message-folder.js';
import { holdsForeignLines, readStreamEvent } from './stream-event-shape.js';

interface Common {
  requestId: string | undefined;
}

export type AttemptOutcome =
  | (Common & { kind: 'message'; folded: FoldedMessage; status: number })
  | (Common & { kind: 'status'; status: number; headers: Headers; errorType: string | undefined; errorMessage: string })
  | (Common & {
      kind: 'stream-error';
      headers: Headers;
      errorType: string;
      errorMessage: string;
      beforeContent: boolean;
      /** The event's own retry-after (an mms's `mms_retry_after`), in seconds. */
      retryAfterSeconds: number | undefined;
      usage: Usage | undefined;
    })
  /**
   * A 2xx whose bytes arrived but are no message: broken frames, events out of order or without
   * their fields, a proxy's page, JSON that is no message (issue 32). Spec, Client retry policy
   * 2: a successful response with no usable answer, retried at most once above the HTTP layer,
   * and a decline (policy 4: "A 2xx response counts once, even when its JSON is invalid").
   */
  | (Common & { kind: 'unreadable'; status: number; detail: string; usage: Usage | undefined })
  /** Refused, reset, stalled past a phase timer, or cut short: the transport failed. */
  | (Common & {
      kind: 'connection';
      phase: AttemptPhase | 'network' | 'stream';
      detail: string;
      usage: Usage | undefined;
    })
  | (Common & { kind: 'deadline'; phase: AttemptPhase; detail: string; usage: Usage | undefined })
  | (Common & { kind: 'aborted'; reason: unknown });

export interface AttemptRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  fetch: typeof fetch;
  timers: AttemptTimers;
  signal: AbortSignal | undefined;
}

export async function streamAttempt(request: AttemptRequest): Promise<AttemptOutcome> {
  const clock = new AttemptClock(request.timers);
  const stopOnCallerAbort = () => clock.controller.abort(request.signal?.reason);
  request.signal?.addEventListener('abort', stopOnCallerAbort, { once: true });
  const state: ReadState = { requestId: undefined, folder: new MessageFolder(), events: 0 };
  try {
    if (request.signal?.aborted) return { kind: 'aborted', reason: request.signal.reason, requestId: undefined };
    const response = await request.fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: clock.controller.signal,
    });
    state.requestId = response.headers.get('request-id') ?? undefined;
    clock.enter('first-event');
    if (!response.ok) return await statusOutcome(response, state.requestId);
    if ((response.headers.get('content-type') ?? '').includes('application/json'))
      return await jsonOutcome(response, state.requestId);
    return await readStream(response, clock, state);
  } catch (error) {
    return failureOutcome(error, clock, state, request.signal);
  } finally {
    clock.dispose();
    request.signal?.removeEventListener('abort', stopOnCallerAbort);
    // Whatever ended the attempt, the socket goes: a stalled stream must not linger.
    if (!clock.controller.signal.aborted) clock.controller.abort(new Error('attempt finished'));
  }
}

interface ReadState {
  requestId: string | undefined;
  folder: MessageFolder;
  events: number;
}

/** How much of a body that forms no event is kept to judge it (stream-event-shape.ts holdsForeignLines). */
const PREAMBLE_CHARS = 8_192;

async function readStream(response: Response, clock: AttemptClock, state: ReadState): Promise<AttemptOutcome> {
  if (!response.body)
    return {
      kind: 'connection',
      phase: 'stream',
      detail: 'the 200 response has no body',
      requestId: state.requestId,
      usage: undefined,
    };
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  // The text before the first event, to tell a body that is no event stream from one cut short.
  let preamble = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      if (state.events === 0 && preamble.length < PREAMBLE_CHARS) preamble += text.slice(0, PREAMBLE_CHARS);
      for (const frame of parser.push(text)) {
        // `error:` lines are llama.cpp's, no part of this service's stream: a frame of only
        // those carries no event. A frame cut off by the end of the stream is never read
        // (no parser.end()): the check for message_stop below reports the stream as cut short.
        if (frame.error !== undefined && frame.data === '') continue;
        state.events += 1;
        state.folder.apply(readStreamEvent(frame.data));
      }
      // Idle means no bytes at all: a long event arriving slowly is progress, not a stall.
      if (state.events > 0) clock.enter('idle');
    }
    if (state.events === 0 && holdsForeignLines(preamble, preamble.length < PREAMBLE_CHARS))
      return unreadable(response, state.requestId, `no event stream: ${preamble.trim()}`, undefined);
    if (!state.folder.finished) {
      return {
        kind: 'connection',
        phase: 'stream',
        detail: `the stream ended after ${state.events} events, before message_stop`,
        requestId: state.requestId,
        usage: state.folder.usage,
      };
    }
    return { kind: 'message', folded: state.folder.result(), status: response.status, requestId: state.requestId };
  } catch (error) {
    if (error instanceof StreamErrorEvent) {
      return {
        kind: 'stream-error',
        headers: response.headers,
        errorType: error.errorType,
        errorMessage: error.message,
        beforeContent: error.beforeContent,
        retryAfterSeconds: error.retryAfterSeconds,
        requestId: state.requestId,
        usage: state.folder.usage,
      };
    }
    if (error instanceof SyntaxError || error instanceof StreamProtocolError)
      return unreadable(response, state.requestId, `event ${state.events}: ${error.message}`, state.folder.usage);
    throw error;
  }
}

async function jsonOutcome(response: Response, requestId: string | undefined): Promise<AttemptOutcome> {
  const text = await response.text();
  let message: Message;
  try {
    message = JSON.parse(text) as Message;
  } catch (error) {
    return unreadable(response, requestId, (error as Error).message, undefined);
  }
  if (message === null || typeof message !== 'object' || !Array.isArray(message.content) || message.usage === undefined)
    return unreadable(response, requestId, 'JSON that is not a message', undefined);
  return { kind: 'message', folded: { message, unparsedInputs: new Map() }, status: response.status, requestId };
}

/**
 * A 2xx whose bytes arrived and are no message (a proxy's page under a 200, broken frames, JSON
 * that is no message): an answer-level failure, not a transport one (spec, Client retry policy 2
 * and 4; issue 32, docs/decisions/0010). A connection that broke while reading stays a
 * `connection` outcome (failureOutcome), for the HTTP layer to retry.
 */
function unreadable(
  response: Response,
  requestId: string | undefined,
  detail: string,
  usage: Usage | undefined,
): AttemptOutcome {
  const type = response.headers.get('content-type') ?? 'no content-type';
  return {
    kind: 'unreadable',
    status: response.status,
    detail: `the ${response.status} response's body is unreadable (${type}): ${detail.slice(0, 200)}`,
    requestId,
    usage,
  };
}

async function statusOutcome(response: Response, requestId: string | undefined): Promise<AttemptOutcome> {
  const text = await response.text();
  let errorType: string | undefined;
  let errorMessage = text.slice(0, 500);
  let bodyRequestId: string | undefined;
  try {
    const envelope = JSON.parse(text) as { error?: { type?: unknown; message?: unknown }; request_id?: unknown };
    if (typeof envelope.error?.type === 'string') errorType = envelope.error.type;
    if (typeof envelope.error?.message === 'string') errorMessage = envelope.error.message;
    if (typeof envelope.request_id === 'string') bodyRequestId = envelope.request_id;
  } catch {
    // Not the error envelope (a proxy's page, say): the raw text is the detail.
  }
  return {
    kind: 'status',
    status: response.status,
    headers: response.headers,
    errorType,
    errorMessage,
    requestId: requestId ?? bodyRequestId,
  };
}

function failureOutcome(
  error: unknown,
  clock: AttemptClock,
  state: ReadState,
  signal: AbortSignal | undefined,
): AttemptOutcome {
  const usage = state.folder.usage;
  const requestId = state.requestId;
  if (clock.expired) {
    const { phase, deadline, afterMs } = clock.expired;
    const seen = phase === 'idle' ? ` after ${state.events} events` : '';
    if (deadline)
      return {
        kind: 'deadline',
        phase,
        detail: `the deadline came during the ${phase} phase${seen}, ${afterMs} ms into the attempt`,
        requestId,
        usage,
      };
    return {
      kind: 'connection',
      phase,
      detail: `no ${phase === 'connect' ? 'response headers' : 'stream event'} within the ${phase} timer (${clock.phaseLengthMs()} ms)${seen}`,
      requestId,
      usage,
    };
  }
  if (signal?.aborted) return { kind: 'aborted', reason: signal.reason, requestId };
  const detail = describeError(error);
  return {
    kind: 'connection',
    phase: state.events > 0 || requestId !== undefined ? 'stream' : 'network',
    detail,
    requestId,
    usage,
  };
}

/** `fetch failed: connect ECONNREFUSED 127.0.0.1:1`, rather than only `fetch failed`. */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error
      ? `: ${(error.cause as Error & { code?: string }).code ?? ''} ${error.cause.message}`.replace(/\s+/g, ' ')
      : '';
  return `${error.message}${cause}`;
}
