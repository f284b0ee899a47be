/**
 * A streamed POST read with node:http rather than fetch: fetch gives no trailers, and a stream
 * on a fallback list names the backend that answered in its `mms-backend` trailer.
 */
import { request } from 'node:http';
import { parseSse, type SseEvent } from './sse.js';
import type { RunningService } from './start-service.js';

export interface StreamReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  trailers: Record<string, string | undefined>;
  events: SseEvent[];
}

export function postStreamWithTrailers(
  service: RunningService,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<StreamReply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${service.baseURL}/v1/messages`,
      { method: 'POST', headers: { ...service.headers, ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (piece: string) => (text += piece));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            trailers: response.trailers,
            events: response.statusCode === 200 ? parseSse(text) : [],
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify({ ...body, stream: true }));
  });
}
