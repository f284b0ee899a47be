/**
 * Every error the service can answer with: one table of code -> HTTP status and wire type.
 * docs/errors.md is kept in step with this table by a test.
 */

export const ERROR_TABLE = {
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The request body, a header or a rule of the endpoint is not satisfied.',
  },
  unsupported_version: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The version header is missing or is neither 2023-06-01 nor 2026-10-21.',
  },
  strict_schema_keyword: {
    status: 400,
    type: 'invalid_request_error',
    description: 'A strict tool schema uses a keyword outside the accepted list (endpoint rule 1).',
  },
  rule_refused: {
    status: 400,
    type: 'invalid_request_error',
    description:
      'The request breaks endpoint rules 2 to 5 (thinking, programmatic tool calling, prefill, thinking per model generation).',
  },
  prompt_too_long: {
    status: 400,
    type: 'invalid_request_error',
    description: 'The prompt has more tokens than the model context window.',
  },
  authentication: {
    status: 401,
    type: 'authentication_error',
    description: 'The API key is missing or not one of the configured keys.',
  },
  permission: {
    status: 403,
    type: 'permission_error',
    description:
      'The key may not use this resource: a model outside its `models`, or GET /v1/usage with a key that is not an admin key.',
  },
  not_found: {
    status: 404,
    type: 'not_found_error',
    description: 'Unknown route, or a model id or alias that is not configured.',
  },
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    description: 'CONNECT: the service is not a proxy. Other unknown methods and paths are not_found.',
  },
  request_timeout: {
    status: 408,
    type: 'timeout_error',
    description: "The client did not send the request's headers, or all of it, within the service's listen limits.",
  },
  request_too_large: { status: 413, type: 'request_too_large', description: 'The body is larger than 32 MB.' },
  expectation_failed: {
    status: 417,
    type: 'invalid_request_error',
    description: 'An Expect header other than 100-continue.',
  },
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    description:
      'A limit of the key (requests, input or output tokens per minute, requests in flight) is reached; the response carries retry-after and the anthropic-ratelimit-* headers.',
  },
  headers_too_large: {
    status: 431,
    type: 'request_too_large',
    description: "The request's headers are larger than node:http reads (16 KB).",
  },
  internal: { status: 500, type: 'api_error', description: 'An unexpected failure inside the service or its backend.' },
  model_output_invalid: {
    status: 502,
    type: 'api_error',
    description:
      "The model's output broke the request's contract (schema, offered tools) after the one retry the service makes; the backend itself worked.",
  },
  too_many_connections: {
    status: 503,
    type: 'overloaded_error',
    description:
      'The service holds listen.maxConnections connections and every one has a request in flight; the response carries retry-after.',
  },
  limits_unavailable: {
    status: 503,
    type: 'api_error',
    description:
      'The store of the keys\' limits (Redis) cannot be reached and limits.onStoreError is "refuse"; the response carries retry-after.',
  },
  timeout: {
    status: 504,
    type: 'timeout_error',
    description: "The model's engine did not answer within the backend's connect, first-byte or idle limit.",
  },
  overloaded: {
    status: 529,
    type: 'overloaded_error',
    description:
      'The backend is at its concurrency limit and its queue is full, or the request bodies held at once leave no room for this one (listen.maxBodyMemoryInFlight; the connection closes); the response carries retry-after.',
  },
} as const satisfies Record<string, { status: number; type: string; description: string }>;

export type ErrorCode = keyof typeof ERROR_TABLE;
export type ErrorType = (typeof ERROR_TABLE)[ErrorCode]['type'];

export interface ErrorEnvelope {
  type: 'error';
  error: { type: ErrorType; message: string };
  request_id: string | null;
}

/** A typed refusal: every layer throws this and the HTTP edge turns it into the envelope. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  /** Seconds, sent as `retry-after` (429 and 529). */
  readonly retryAfterSeconds: number | undefined;
  /** More headers of the reply (a 429's `anthropic-ratelimit-*`). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /**
   * False where no retry can succeed though the status says a retry may (a 429 whose prompt is
   * over the key's whole per-minute allowance, a 500 for a backend's refused credentials): the
   * reply says `x-should-retry: false`, which the official clients obey (issue 32).
   */
  readonly shouldRetry: boolean | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      retryAfterSeconds?: number;
      cause?: unknown;
      headers?: Record<string, string>;
      shouldRetry?: boolean;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers;
    this.shouldRetry = options.shouldRetry;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }

  get type(): ErrorType {
    return ERROR_TABLE[this.code].type;
  }
}

export function errorEnvelope(type: ErrorType, message: string, requestId: string | null): ErrorEnvelope {
  return { type: 'error', error: { type, message }, request_id: requestId };
}
