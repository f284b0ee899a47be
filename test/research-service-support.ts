/**
 * The real service for research calls from the client: scripted models drive the service's own
 * agent loop, whose server tools are a fake search engine and a fake fetch here (the service's
 * web search is another issue's), so that results carry URLs to cite.
 */
import type { AddressInfo } from 'node:net';
import {
  buildApp,
  ModelRegistry,
  validateConfig,
  type AppOptions,
  type ServiceConfigInput,
} from '@model-messages/server';
import { TEST_API_KEY } from '@model-messages/testing';

/** A search engine with two results per query, and a fetch that returns a fixed page. */
const fakeTools: NonNullable<AppOptions['serverTools']> = {
  run: async (call) => {
    if (call.name === 'web_search') {
      const results = [
        ['https://acme.example/history', 'Acme history'],
        ['https://acme.example/people', 'Acme people'],
      ];
      return {
        type: 'web_search_tool_result',
        tool_use_id: call.id,
        content: results.map(([url, title]) => ({
          type: 'web_search_result',
          url,
          title,
          encrypted_content: 'e',
          page_age: null,
        })),
      };
    }
    if (call.name === 'web_fetch') {
      return {
        type: 'web_fetch_tool_result',
        tool_use_id: call.id,
        content: {
          type: 'web_fetch_result',
          url: String(call.input.url),
          content: {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'Jane Roe founded Acme in 1901.' },
            title: 'Acme records',
          },
          retrieved_at: '2026-01-01T00:00:00Z',
        },
      };
    }
    return {
      type: 'code_execution_tool_result',
      tool_use_id: call.id,
      content: { type: 'code_execution_tool_result_error', error_code: 'unavailable' },
    };
  },
};

export interface ResearchService {
  baseURL: string;
  close(): Promise<void>;
}

/** Starts the service on loopback with `config` (its key: TEST_API_KEY), scripts in `folder`, and the fake tools. */
export async function startResearchService(
  config: Omit<ServiceConfigInput, 'apiKeys'>,
  folder: string,
): Promise<ResearchService> {
  const valid = validateConfig({ apiKeys: [TEST_API_KEY], ...config }, 'research test config');
  const app = buildApp({
    config: valid,
    registry: ModelRegistry.fromConfig(valid.models, folder),
    serverTools: fakeTools,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    baseURL: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    close: () => app.close(),
  };
}
