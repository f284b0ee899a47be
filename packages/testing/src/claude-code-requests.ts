/**
 * Requests of the Claude Code CLI as it sent them (`fixtures/claude-code/`, recorded from
 * `claude -p` 2.1.332 against a logging stand-in): its system messages mid-conversation,
 * adaptive thinking with display omitted, context_management, effort, a deferred tool, draft
 * 2020-12 schemas without `strict`, cache_control everywhere and max_tokens 128000. Replayed
 * against every backend by the normal suite, so that none needs the CLI to stay compatible.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { ProxiedRequest } from './recording-proxy.js';

export interface RecordedClientRequest {
  /** The file's name without `.json`: `plain-prompt`, `write-request`, `write-tool-result`, `web-search`. */
  name: string;
  method: string;
  /** As sent: `/v1/messages?beta=true`. */
  url: string;
  /** As sent, less the key, host, length and connection headers. */
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const FIXTURES = new URL('../fixtures/claude-code/', import.meta.url);

export function claudeCodeRequests(): RecordedClientRequest[] {
  return readdirSync(FIXTURES)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const recorded = JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8')) as Omit<RecordedClientRequest, 'name'>;
      return { ...recorded, name: file.replace(/\.json$/, '') };
    });
}

/** Headers a recording leaves out: the key, and what the connection decides. */
const UNRECORDED_HEADERS = new Set([
  'x-api-key',
  'authorization',
  'host',
  'content-length',
  'connection',
  'accept-encoding',
]);

/**
 * Keeps `request` as the fixture `name` (`npm run check:claude-code -- --record`, issue 34), in
 * the form claudeCodeRequests reads back; `recorded` says what sent it and when.
 */
export function writeClaudeCodeFixture(name: string, request: ProxiedRequest, recorded: string): string {
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([header]) => !UNRECORDED_HEADERS.has(header)),
  );
  const path = new URL(`${name}.json`, FIXTURES);
  const fixture = { recorded, method: request.method, url: request.url, headers, body: request.body };
  writeFileSync(path, `${JSON.stringify(fixture, null, 1)}\n`);
  return path.pathname;
}
