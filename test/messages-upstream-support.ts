/**
 * Shared set-up of the messages-upstream backend tests: an upstream mms (scripted models, faults
 * on) and a front mms whose models all use it, a page server on loopback that only the front may
 * fetch from, and helpers to post to either and read the reply or the stream.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  modelsWithBackend,
  postJson,
  readSse,
  scriptedModels,
  startService,
  type RunningService,
  type SseEvent,
} from '@model-messages/testing';

export interface Block {
  type: string;
  id?: string;
  name?: string;
  text?: string;
  thinking?: string;
  signature?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: unknown;
}

export interface Reply {
  id: string;
  model: string;
  content: Block[];
  stop_reason: string;
  usage: {
    input_tokens: number;
    output_tokens: number;
    server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null;
  };
}

export interface ErrorBody {
  type: string;
  error: { type: string; message: string };
}

export const LOOKUP = {
  name: 'lookup',
  description: 'Look a word up.',
  input_schema: {
    type: 'object',
    properties: { word: { type: 'string' } },
    required: ['word'],
    additionalProperties: false,
  },
};
export const WEB_FETCH = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 3 };

/** The upstream's script: its model calls web_fetch (a custom tool to it), then answers. */
function writeScript(pagesOrigin: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mms-upstream-')), 'script.json');
  const script = [
    {
      when: '^read the page',
      steps: [
        [
          { type: 'text', text: 'Fetching.' },
          { type: 'tool_use', name: 'web_fetch', input: { url: `${pagesOrigin}/doc` } },
        ],
        [{ type: 'text', text: 'The page is read.' }],
      ],
    },
    {
      when: '^two tools$',
      steps: [
        [
          { type: 'tool_use', name: 'lookup', input: { word: 'a' } },
          { type: 'tool_use', name: 'lookup', input: { word: 'b' } },
        ],
      ],
    },
  ];
  writeFileSync(path, JSON.stringify(script));
  return path;
}

export interface UpstreamPair {
  /** Origin of the page server (every path answers `the text of <path>`). */
  pagesOrigin: string;
  upstream: RunningService;
  /** Serves every model through `upstream`, forwarding `mms-fault`; may fetch from loopback. */
  front: RunningService;
  close(): Promise<void>;
}

/** Starts the page server, the upstream and the front; `close` stops all three. */
export async function startUpstreamPair(): Promise<UpstreamPair> {
  const pages = createServer((request, response) =>
    response.writeHead(200, { 'content-type': 'text/plain' }).end(`the text of ${request.url}`),
  );
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const pagesOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  const upstream = await startService({ models: scriptedModels({ script: writeScript(pagesOrigin), faults: true }) });
  const front = await startService({
    models: modelsWithBackend({
      type: 'messages-upstream',
      baseURL: upstream.baseURL,
      apiKey: upstream.apiKey,
      forwardFaults: true,
    }),
    serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'] } },
  });
  return {
    pagesOrigin,
    upstream,
    front,
    close: async () => {
      await front.close();
      await upstream.close();
      pages.closeAllConnections();
      pages.close();
    },
  };
}

export const hello = { model: 'mid', max_tokens: 200, messages: [{ role: 'user', content: 'Hello there, upstream.' }] };

/** POSTs a message request, expects a 200 and reads the JSON reply. */
export async function json(
  service: RunningService,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ response: Response; reply: Reply }> {
  const response = await postJson(service, '/v1/messages', body, headers);
  assert.equal(response.status, 200, await response.clone().text());
  return { response, reply: (await response.json()) as Reply };
}

/** POSTs the same request streamed and reads every SSE event. */
export async function stream(
  service: RunningService,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ response: Response; events: SseEvent[] }> {
  const response = await postJson(service, '/v1/messages', { ...body, stream: true }, headers);
  return { response, events: await readSse(response) };
}

/** Content without the ids each service makes up itself. */
export function withoutIds(blocks: Block[]): Block[] {
  return blocks.map(({ id: _id, ...rest }) => rest);
}
