/**
 * The console's calls to the service: the admin endpoints with the admin key, which lives in this
 * object only (the tab's memory: never stored, never in a URL), and the playground's messages.
 */
import { readEventStream, type StreamEvent } from './event-stream.js';

/** The version every /v1 request names (the service answers 2023-06-01 and 2026-10-21 alike). */
const VERSION = '2023-06-01';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class AdminApi {
  constructor(readonly key: string) {}

  async get<Reply>(path: string, signal?: AbortSignal): Promise<Reply> {
    const response = await fetch(path, { headers: this.headers(this.key), signal });
    if (!response.ok) throw await apiError(response);
    return (await response.json()) as Reply;
  }

  /** Follows a stream of events until it ends or `signal` aborts it. */
  async follow(path: string, onEvent: (event: StreamEvent) => void, signal: AbortSignal): Promise<void> {
    const response = await fetch(path, { headers: this.headers(this.key), signal });
    if (!response.ok) throw await apiError(response);
    await readEventStream(response, onEvent);
  }

  /** POST /v1/messages, streamed, with `key` (the playground's, which may be another than the admin key). */
  async sendMessage(
    key: string,
    body: Record<string, unknown>,
    onEvent: (event: StreamEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const response = await fetch('/v1/messages', {
      method: 'POST',
      headers: { ...this.headers(key), 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
      signal,
    });
    if (!response.ok) throw await apiError(response);
    await readEventStream(response, onEvent);
  }

  /** The models `key` may use (GET /v1/models). */
  async models(key: string): Promise<string[]> {
    const response = await fetch('/v1/models?limit=1000', { headers: this.headers(key) });
    if (!response.ok) throw await apiError(response);
    const reply = (await response.json()) as { data: Array<{ id: string }> };
    return reply.data.map((model) => model.id);
  }

  private headers(key: string): Record<string, string> {
    return { 'x-api-key': key, 'anthropic-version': VERSION };
  }
}

async function apiError(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    return new ApiError(response.status, body.error?.message ?? `${response.status} ${response.statusText}`);
  } catch {
    return new ApiError(response.status, `${response.status} ${response.statusText}`);
  }
}
