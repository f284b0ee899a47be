/**
 * Engine failures as the service's typed errors (packages/protocol/src/errors.ts): an HTTP
 * status, an error inside a stream, a refused connection or a timeout. The engine's own message
 * is kept, shortened (backends/relayed-text.ts); the engine's address and key never are. A
 * problem with mms's own configuration (the engine refuses its key, does not serve its model) is
 * a 500, not the caller's 401 or 404, since the caller's request was fine; a refused key relays
 * none of the engine's text, which goes to the service's log only (the error's cause).
 */
import { ServiceError } from '@model-messages/protocol';
import { relayedText } from '../relayed-text.js';

export type TimeoutPhase = 'connect' | 'first byte' | 'idle';

export class UpstreamTimeoutError extends Error {
  constructor(
    readonly phase: TimeoutPhase,
    readonly limitMs: number,
  ) {
    super(`${phase} timeout after ${limitMs} ms`);
    this.name = 'UpstreamTimeoutError';
  }
}

const CONTEXT_OVERFLOW =
  /context length|context window|maximum context|exceeds? the (available )?context|prompt is too long|too many tokens/i;

/**
 * A non-2xx answer from the engine. `modelLabel` names the backend by its model
 * (`model mid (backends.1)`) in the errors about its configuration.
 */
export function statusError(
  engine: string,
  status: number,
  bodyText: string,
  retryAfter: string | undefined,
  modelLabel?: string,
): ServiceError {
  const detail = engineMessage(bodyText);
  const said = detail ? `: ${detail}` : '';
  const retryAfterSeconds = parseRetryAfter(retryAfter) ?? 1;
  if (status === 400 || status === 422) {
    if (CONTEXT_OVERFLOW.test(detail))
      return new ServiceError('prompt_too_long', `prompt is too long for the model's engine${said}`);
    return new ServiceError('invalid_request', `the ${engine} engine refused the request (${status})${said}`);
  }
  const of = modelLabel === undefined ? '' : ` of ${modelLabel}`;
  if (status === 401 || status === 403)
    return new ServiceError(
      'internal',
      `the ${engine} engine${of} refused mms's credentials (${status}); check the backend's apiKey or apiKeyEnv; the engine's answer is in the service's log`,
      // A configuration to fix, which no retry mends (issue 32).
      { cause: new Error(`the engine answered ${status}: ${detail || 'no message'}`), shouldRetry: false },
    );
  if (status === 404)
    return new ServiceError(
      'internal',
      `the ${engine} engine${of} answered 404${said}; check the backend's baseURL and model`,
      { shouldRetry: false },
    );
  if (status === 408 || status === 504)
    return new ServiceError('timeout', `the ${engine} engine timed out (${status})${said}`);
  if (status === 413)
    return new ServiceError('request_too_large', `the ${engine} engine refused the request as too large${said}`);
  if (status === 429)
    return new ServiceError('rate_limited', `the ${engine} engine is rate limiting${said}`, { retryAfterSeconds });
  if (status === 503 || status === 529)
    return new ServiceError('overloaded', `the ${engine} engine is overloaded or not ready (${status})${said}`, {
      retryAfterSeconds,
    });
  return new ServiceError('internal', `the ${engine} engine failed (${status})${said}`);
}

/** An error object sent inside a stream (vLLM and llama.cpp send one when generation fails). */
export function streamError(engine: string, payload: unknown, modelLabel?: string): ServiceError {
  const error = (payload as { error?: unknown }).error ?? payload;
  const code = typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 500;
  return statusError(engine, code >= 400 && code < 600 ? code : 500, JSON.stringify(payload), undefined, modelLabel);
}

/**
 * A failure with no HTTP answer: refused, reset, unresolvable, timed out. The system's message,
 * which names the engine's address, stays in the cause, for the log.
 */
export function transportError(engine: string, error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  if (error instanceof UpstreamTimeoutError) return timeoutError(engine, error.phase, error.limitMs);
  const code = errorCode(error);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return timeoutError(engine, 'connect', undefined);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return timeoutError(engine, 'first byte', undefined);
    case 'UND_ERR_BODY_TIMEOUT':
      return timeoutError(engine, 'idle', undefined);
    case 'ECONNREFUSED':
      return new ServiceError(
        'internal',
        `the ${engine} engine is not reachable (connection refused): is it running at the backend's baseURL?`,
        { cause: error },
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ServiceError(
        'internal',
        `the ${engine} engine's host name does not resolve (${code}): check the backend's baseURL`,
        { cause: error },
      );
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new ServiceError('internal', `the connection to the ${engine} engine closed unexpectedly (${code})`, {
        cause: error,
      });
    default:
      return new ServiceError(
        'internal',
        `the request to the ${engine} engine failed (${code ?? (error as Error).name ?? 'no error code'})`,
        { cause: error },
      );
  }
}

function timeoutError(engine: string, phase: TimeoutPhase, limitMs: number | undefined): ServiceError {
  const limit = limitMs === undefined ? '' : ` (${limitMs} ms)`;
  return new ServiceError('timeout', `the ${engine} engine did not answer in time: ${phase} timeout${limit}`);
}

/** undici puts the system error code on the error or on its cause. */
function errorCode(error: unknown): string | undefined {
  const direct = (error as { code?: unknown }).code;
  if (typeof direct === 'string') return direct;
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/**
 * The message in an engine's error body: OpenAI's `{"error": {"message"}}` (vLLM, llama.cpp,
 * Ollama's OpenAI layer), `{"object": "error", "message"}` (vLLM before 0.9, SGLang),
 * `{"error": "..."}` (Ollama's own API), FastAPI's `{"detail": ...}`, or plain text.
 */
export function engineMessage(bodyText: string): string {
  let message = bodyText.trim();
  try {
    const body = JSON.parse(bodyText) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = body.error as { message?: unknown } | string | undefined;
    const found =
      typeof error === 'string'
        ? error
        : typeof error?.message === 'string'
          ? error.message
          : typeof body.message === 'string'
            ? body.message
            : body.detail;
    if (found !== undefined) message = typeof found === 'string' ? found : JSON.stringify(found);
  } catch {
    // Not JSON: the text itself.
  }
  return relayedText(message);
}

function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
