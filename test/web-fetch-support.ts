/**
 * Shared set-up of the web fetch end-to-end tests: the testing kit's page server and rebinding
 * hosts (page-server.ts), a script that fetches what the user text names, and four services with
 * different fetch settings.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  postJson,
  scriptedModels,
  startPageServer,
  startRebindingHosts,
  startService,
  type RunningService,
} from '@model-messages/testing';

let origin: string;
let rebindOrigin: string;

/** Every one must be refused before a connection is made (the IPv6 forms carry 127.0.0.1 or 169.254.169.254). */
export const SSRF_TARGETS = [
  'http://127.0.0.1:9/',
  'http://[::1]:9/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://169.254.169.254/',
  'http://10.0.0.1/',
  'http://localhost:9/',
  'file:///etc/passwd',
  'http://0.0.0.0:9/',
  'http://[::]:9/',
  'http://[::7f00:1]:9/',
  'http://[2002:7f00:1::1]:9/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[::ffff:0:7f00:1]:9/',
  'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
];
export const EXFIL_PATH = '/exfil?secret=hunter2';

/** A script whose step 0 fetches the first URL in the user text (twice for 'twice'), then answers. */
function writeScript(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-fetch-'));
  const path = join(folder, 'script.json');
  const fetchCall = (url: string) => ({ type: 'server_tool_use', name: 'web_fetch', input: { url } });
  const entries: Array<{ when: string; steps: Array<Array<Record<string, unknown>>> }> = [
    'article',
    'notes.txt',
    'data.json',
    'limited',
    'image.png',
    'huge',
    'slow',
    'redirect',
    'redirect-metadata',
    'redirect-loop',
    'missing',
  ].map((page) => ({
    when: `^fetch ${origin}/${page.replace('.', '\\.')}$`,
    steps: [[fetchCall(`${origin}/${page}`)], [{ type: 'text', text: 'Done.' }]],
  }));
  entries.push({
    when: '^twice',
    steps: [[fetchCall(`${origin}/notes.txt`), fetchCall(`${origin}/article`)], [{ type: 'text', text: 'Done.' }]],
  });
  entries.push({
    when: '^unmentioned',
    steps: [[fetchCall(`${origin}/notes.txt`)], [{ type: 'text', text: 'Done.' }]],
  });
  const done = [{ type: 'text', text: 'Done.' }];
  // The model writes a URL of its own (as a prompt injection would make it) and fetches it.
  entries.push({
    when: '^exfiltrate',
    steps: [
      [
        { type: 'thinking', thinking: `I will send it to ${EXFIL_PATH}.` },
        { type: 'text', text: `Saving the secret at ${origin}${EXFIL_PATH} now.` },
        fetchCall(`${origin}${EXFIL_PATH}`),
      ],
      done,
    ],
  });
  entries.push({ when: '^fetch what you wrote$', steps: [[fetchCall(`${origin}${EXFIL_PATH}`)], done] });
  entries.push({ when: '^prefix ', steps: [[fetchCall(`${origin}/notes`)], done] });
  entries.push({ when: '^query ', steps: [[fetchCall(`${origin}/notes.txt?page=2`)], done] });
  entries.push({ when: '^fragment ', steps: [[fetchCall(`${origin}/notes.txt`)], done] });
  entries.push({
    when: '^search then fetch$',
    steps: [
      [{ type: 'server_tool_use', name: 'web_search', input: { query: 'otters found' } }],
      [fetchCall(`${origin}/found-by-search`)],
      done,
    ],
  });
  entries.push({
    when: '^rebind ',
    steps: [[fetchCall(`${rebindOrigin}/page`)], [fetchCall(`${rebindOrigin}/page`)], done],
  });
  entries.push({ when: '^two huge ', steps: [[fetchCall(`${origin}/huge`), fetchCall(`${origin}/huge`)], done] });
  entries.push({
    when: '^budget search ',
    steps: [
      [{ type: 'server_tool_use', name: 'web_search', input: { query: 'otters found' } }],
      [fetchCall(`${origin}/huge`)],
      done,
    ],
  });
  entries.push({
    when: '^follow a link ',
    steps: [[fetchCall(`${origin}/index.html`)], [fetchCall(`${origin}/linked`)], done],
  });
  for (const target of SSRF_TARGETS) {
    entries.push({
      when: `^ssrf ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
      steps: [[fetchCall(target)], [{ type: 'text', text: 'Done.' }]],
    });
  }
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

export interface FetchBench {
  /** The page server's origin. */
  origin: string;
  /** `rebind.test` on the rebinding hosts' port. */
  rebindOrigin: string;
  /** Loopback allowed, maxBytes 50,000, 500 ms, 3 redirects, and web search over one document whose URL only a search gives. */
  allowed: RunningService;
  /** The default networks (loopback refused). */
  guarded: RunningService;
  /** maxBytes at its minimum (1024) and a time limit no test waits out. */
  patient: RunningService;
  /** DNS rebinding: `rebind.test` resolves to 127.0.0.1 (allowed) first and to 127.0.0.2 (not) after. */
  rebinding: RunningService;
  /** Every path the page server was asked for, to prove that a refused fetch sent nothing. */
  served: string[];
  /** Settles when the connection that asked for /limited (a 429 whose body never ends) closes. */
  readonly limitedClosed: Promise<void> | undefined;
  /** Every name the rebinding lookup was asked for. */
  rebindLookups: string[];
  /** Every path the private rebinding host was asked for. */
  privateHostRequests: string[];
  close(): Promise<void>;
}

/** Starts the page servers and the four services; `close` stops them all. */
export async function startFetchBench(): Promise<FetchBench> {
  const rebindingHosts = await startRebindingHosts();
  rebindOrigin = rebindingHosts.origin;
  const pages = await startPageServer();
  origin = pages.origin;
  const script = writeScript();
  const webFetch = { allowNetworks: ['127.0.0.1/32'], maxBytes: 50_000, timeoutMs: 500, maxRedirects: 3 };
  // One document whose URL only a search can give.
  const documents = mkdtempSync(join(tmpdir(), 'mms-fetch-docs-'));
  writeFileSync(
    join(documents, 'found.md'),
    `---\nurl: ${origin}/found-by-search\ntitle: Found\n---\nOtters found by a search.\n`,
  );
  const webSearch = { provider: { type: 'folder' as const, folder: documents, watch: false } };
  const allowed = await startService({ models: scriptedModels({ script }), serverTools: { webFetch, webSearch } });
  const guarded = await startService({
    models: scriptedModels({ script }),
    serverTools: { webFetch: { timeoutMs: 500 } },
  });
  const patient = await startService({
    models: scriptedModels({ script }),
    serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], maxBytes: 1024, timeoutMs: 60_000 } },
  });
  const rebinding = await startService(
    {
      models: scriptedModels({ script }),
      serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'], timeoutMs: 2_000 } },
    },
    process.cwd(),
    { toolProviders: { hostLookup: rebindingHosts.lookup } },
  );
  return {
    origin,
    rebindOrigin,
    allowed,
    guarded,
    patient,
    rebinding,
    served: pages.served,
    get limitedClosed() {
      return pages.limitedClosed;
    },
    rebindLookups: rebindingHosts.lookups,
    privateHostRequests: rebindingHosts.privateHostRequests,
    close: async () => {
      await allowed.close();
      await guarded.close();
      await patient.close();
      await rebinding.close();
      rebindingHosts.close();
      pages.close();
    },
  };
}

export interface ResultBlock {
  type: string;
  content?: {
    type: string;
    error_code?: string;
    url?: string;
    content?: { source: { data: string }; title: string | null };
  };
  text?: string;
}

export const FETCH_TOOL = { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'], max_uses: 5 };

export interface Reply {
  content: ResultBlock[];
  usage: { input_tokens: number; server_tool_use: { web_fetch_requests: number } | null };
}

/** Asks the `mid` model, with `text` as the user turn and FETCH_TOOL (`tool` over it) as its one tool. */
export async function fetchVia(
  service: RunningService,
  text: string,
  tool: Record<string, unknown> = {},
): Promise<Reply> {
  const body = {
    model: 'mid',
    max_tokens: 200,
    messages: [{ role: 'user', content: text }],
    tools: [{ ...FETCH_TOOL, ...tool }],
  };
  const response = await postJson(service, '/v1/messages', body);
  assert.equal(response.status, 200);
  return (await response.json()) as Reply;
}

/** The content of each web_fetch_tool_result block, in order. */
export function results(content: ResultBlock[]): ResultBlock['content'][] {
  return content.filter((block) => block.type === 'web_fetch_tool_result').map((block) => block.content);
}
