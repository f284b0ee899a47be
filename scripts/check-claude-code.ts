/**
 * `npm run check:claude-code -- --version <v|latest> [--record]` (issue 34): keeps up with Claude
 * Code's releases. Installs that CLI version into `.cache/claude-code-<v>/`, runs the recorded
 * scenarios against mms on the scripted backend and on a tiny GGUF (the embedded engine), and
 * prints a table: a plain prompt, a Write round trip, a web search (its WebSearch tool's own
 * request carries `web_search_20250305`, which mms's search provider answers), and a long session
 * in which context editing fires.
 *
 * The long session speaks the CLI's own dialect (its system prompt, tools, betas and edits, as
 * recorded from its first request) and goes on turn by turn with Read calls and large results,
 * adding `clear_tool_uses_20250919` as the CLI adds it and `compact_20260112`: the CLI sends
 * clear_tool_uses only when a flag of its own service turns it on, which no offline run can. On
 * the scripted backend each run must do what was asked; the tiny GGUF writes noise, so there
 * every request must be answered with a 2xx, and what the scripted run's CLI sent (WebSearch's own
 * request, the long session's) is replayed to it. With `--record`, the requests the scripted run
 * recorded become the fixtures (packages/testing/fixtures/claude-code/) that the suite replays
 * against every backend. The suite itself drives the pinned version (test/claude-code-cli.test.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  CLAUDE_CODE_SCENARIOS,
  CLAUDE_CODE_VERSION,
  claudeCodeCli,
  claudeCodeScript,
  documentsFolder,
  RecordingProxy,
  runClaudeCode,
  SEARCH_URL_BASE,
  startService,
  tinyLlamaModel,
  writeClaudeCodeFixture,
  type ClaudeCodeScenario,
  type ProxiedRequest,
  type RunningService,
} from '@model-messages/testing';
import type { ServiceConfigInput } from '@model-messages/server';

const { values } = parseArgs({
  options: {
    version: { type: 'string', default: CLAUDE_CODE_VERSION },
    record: { type: 'boolean', default: false },
  },
});

const cli = await claudeCodeCli(values.version);
if ('unavailable' in cli) {
  console.error(cli.unavailable);
  process.exit(1);
}

interface Outcome {
  pass: boolean;
  detail: string;
}

type Backend = 'scripted' | 'tiny GGUF';

interface Bench {
  service: RunningService;
  proxy: RecordingProxy;
  workFolder: string;
}

const SIGNING_KEY = 'check-claude-code-signing-key-0123456789';

/** The long session's script: one Read call per step, until compaction's summary prompt. */
const LONG_SESSION_PROMPT = 'Read the repository, file by file.';
const SUMMARY = 'Summary: the user asked to read the repository file by file; the files read so far are noted.';

async function startBench(backend: Backend): Promise<Bench> {
  const workFolder = mkdtempSync(join(tmpdir(), 'mms-check-claude-code-'));
  const script = join(mkdtempSync(join(tmpdir(), 'mms-check-claude-code-script-')), 'script.json');
  writeFileSync(
    script,
    JSON.stringify([
      ...claudeCodeScript(workFolder),
      {
        when: LONG_SESSION_PROMPT.replaceAll('.', '\\.'),
        steps: Array.from({ length: 60 }, (_, step) => [
          { type: 'tool_use', name: 'Read', input: { file_path: join(workFolder, `src/file-${step}.ts`) } },
        ]),
      },
      { when: '^Write a summary of the conversation so far', steps: [[{ type: 'text', text: SUMMARY }]] },
    ]),
  );
  const engine: ServiceConfigInput['models'][number] =
    backend === 'scripted'
      ? {
          id: 'house-model',
          tier: 'large',
          generation: 'newer',
          contextWindow: 200_000,
          maxOutputTokens: 32_000,
          backend: { type: 'scripted', script },
        }
      : {
          // The smallest shape llama.cpp's flash attention takes, as the replay test has it.
          id: 'house-model',
          tier: 'large',
          generation: 'newer',
          contextWindow: 131_072,
          maxOutputTokens: 64,
          backend: {
            type: 'llama-cpp',
            model: await tinyLlamaModel({ contextLength: 131_072, embeddingSize: 16, heads: 1, kvHeads: 1, layers: 1 }),
            threads: 1,
          },
        };
  const service = await startService(
    {
      models: [{ ...engine, aliases: ['claude-*'], maxTokens: 'clamp' }],
      serverTools: {
        webSearch: { provider: { type: 'folder', folder: documentsFolder(), urlBase: SEARCH_URL_BASE, watch: false } },
      },
    },
    process.cwd(),
    // One key for both benches, as replicas share one: what the scripted run signed (the long
    // session's compaction block) verifies when it is replayed to the GGUF.
    { signingKey: SIGNING_KEY },
  );
  return { service, proxy: await RecordingProxy.start(service.baseURL), workFolder };
}

/** The CLI run on `scenario` against `bench`, and the message requests it sent. */
async function runScenario(bench: Bench, scenario: ClaudeCodeScenario) {
  const before = bench.proxy.requests.length;
  const run = await runClaudeCode(cli as { path: string }, {
    prompt: scenario.prompt,
    args: scenario.args,
    cwd: bench.workFolder,
    baseURL: bench.proxy.baseURL,
    apiKey: bench.service.apiKey,
  });
  const requests = bench.proxy.requests
    .slice(before)
    .filter((request) => request.method === 'POST' && request.url.startsWith('/v1/messages'));
  return { run, requests };
}

function statuses(requests: readonly ProxiedRequest[]): string {
  const counts = new Map<number, number>();
  for (const request of requests) counts.set(request.status, (counts.get(request.status) ?? 0) + 1);
  return [...counts].map(([status, count]) => `${count}x${status}`).join(' ') || 'no requests';
}

/** Sends a recorded request again, as the CLI sent it, to `bench`; answers its status and JSON. */
async function send(bench: Bench, request: ProxiedRequest, body: Record<string, unknown>) {
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === 'string' && !['host', 'content-length', 'connection'].includes(entry[0]),
    ),
  );
  const response = await fetch(`${bench.proxy.baseURL}${request.url}`, {
    method: 'POST',
    headers: { ...headers, 'x-api-key': bench.service.apiKey },
    body: JSON.stringify({ ...body, stream: false }),
  });
  return { status: response.status, reply: (await response.json()) as Record<string, unknown> };
}

/** A file's text as the Read tool gives it: some 400 tokens. */
function fileText(index: number): string {
  return Array.from(
    { length: 20 },
    (_, line) => `${line + 1}\tconst value${line} = compute(${line * index}, "otter");`,
  ).join('\n');
}

interface LongSession {
  outcome: Outcome;
  /** The requests worth replaying: the first that cleared, the one that compacted, the one after. */
  kept: Array<Record<string, unknown>>;
}

/**
 * The long session on the scripted backend, from the CLI's first recorded request: a Read call
 * and a large result per turn, until the conversation is compacted, then one more turn.
 */
async function longSession(bench: Bench, base: ProxiedRequest): Promise<LongSession> {
  const first = base.body!;
  const counted = await fetch(`${bench.service.baseURL}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: bench.service.headers,
    body: JSON.stringify({
      model: first.model,
      system: first.system,
      tools: first.tools,
      messages: [{ role: 'user', content: LONG_SESSION_PROMPT }],
    }),
  });
  const start = ((await counted.json()) as { input_tokens: number }).input_tokens;
  const edits = [
    ...(((first.context_management as { edits?: unknown[] } | undefined)?.edits ?? []) as unknown[]),
    // As the CLI adds it when its clearing is on (its own fields), past the prompt it starts with.
    {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'input_tokens', value: start + 1_600 },
      keep: { type: 'tool_uses', value: 3 },
      clear_at_least: { type: 'input_tokens', value: 500 },
      exclude_tools: ['Edit', 'Write'],
    },
    { type: 'compact_20260112', trigger: { type: 'input_tokens', value: start + 2_000 } },
  ];
  const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: LONG_SESSION_PROMPT }] }];
  const kept: Array<Record<string, unknown>> = [];
  let clearedAt: number | undefined;
  for (let turn = 0; turn < 60; turn += 1) {
    const body = { ...first, messages: [...messages], context_management: { edits } };
    const { status, reply } = await send(bench, base, body);
    if (status !== 200)
      return {
        outcome: { pass: false, detail: `turn ${turn}: ${status} ${JSON.stringify(reply).slice(0, 200)}` },
        kept,
      };
    const content = reply.content as Array<{ type: string; id?: string; name?: string }>;
    const applied =
      (reply.context_management as { applied_edits?: Array<{ type: string }> } | undefined)?.applied_edits ?? [];
    if (clearedAt === undefined && applied.some((edit) => edit.type === 'clear_tool_uses_20250919')) {
      clearedAt = turn;
      kept.push(body);
    }
    if (content[0]?.type === 'compaction') {
      kept.push(body);
      const next = {
        ...first,
        messages: [...messages, { role: 'assistant', content }, { role: 'user', content: 'Which files did you read?' }],
        context_management: { edits },
      };
      kept.push(next);
      const after = await send(bench, base, next);
      const usage = after.reply.usage as { input_tokens: number } | undefined;
      const pass = clearedAt !== undefined && after.status === 200 && (usage?.input_tokens ?? Infinity) < start + 500;
      return {
        outcome: {
          pass,
          detail: `${turn + 1} turns; cleared from turn ${clearedAt ?? 'never'}; compacted at turn ${turn}; next request ${after.status}, ${usage?.input_tokens} input tokens`,
        },
        kept,
      };
    }
    const call = content.at(-1)!;
    if (call.name !== 'Read') return { outcome: { pass: false, detail: `turn ${turn}: no Read call` }, kept };
    messages.push({ role: 'assistant', content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: fileText(turn) }] });
  }
  return {
    outcome: { pass: false, detail: `no compaction in 60 turns (cleared from turn ${clearedAt ?? 'never'})` },
    kept,
  };
}

const rows = new Map<string, Partial<Record<Backend, Outcome>>>();
const row = (scenario: string) => rows.get(scenario) ?? rows.set(scenario, {}).get(scenario)!;
const recorded = `claude-cli ${cli.version} -p, ${new Date().toISOString().slice(0, 10)}, against mms (npm run check:claude-code)`;

const scripted = await startBench('scripted');
/** What the scripted run's CLI sent, by scenario, for the GGUF and the fixtures. */
const sent = new Map<string, ProxiedRequest[]>();
let session: LongSession = { outcome: { pass: false, detail: 'not run' }, kept: [] };
try {
  for (const scenario of CLAUDE_CODE_SCENARIOS) {
    const { run, requests } = await runScenario(scripted, scenario);
    sent.set(scenario.name, requests);
    const problem =
      run.status !== 0
        ? `exit ${run.status}: ${run.stderr.slice(-200)}`
        : requests.some((request) => request.status >= 400)
          ? `answered ${statuses(requests)}`
          : scenario.problem(run, scripted.workFolder);
    row(scenario.name).scripted = {
      pass: problem === undefined,
      detail: problem ?? `${requests.length} requests, ${statuses(requests)}`,
    };
    if (values.record)
      scenario.fixtures.forEach((name, index) => {
        if (name !== undefined && requests[index])
          console.log(`recorded ${writeClaudeCodeFixture(name, requests[index], recorded)}`);
      });
  }
  session = await longSession(scripted, sent.get('plain-prompt')![0]!);
  row('long-session').scripted = session.outcome;
} finally {
  await scripted.proxy.close();
  await scripted.service.close();
}

const gguf = await startBench('tiny GGUF');
try {
  for (const scenario of CLAUDE_CODE_SCENARIOS) {
    if (scenario.name === 'web-search') {
      // The tiny model never calls WebSearch: WebSearch's own request, as the CLI sent it, is replayed.
      const request = sent
        .get('web-search')!
        .find((candidate) => JSON.stringify(candidate.body?.tools).includes('web_search_20250305'))!;
      const { status } = await send(gguf, request, request.body!);
      row(scenario.name)['tiny GGUF'] = { pass: status === 200, detail: `WebSearch's request replayed: ${status}` };
      continue;
    }
    const { run, requests } = await runScenario(gguf, scenario);
    const pass = requests.length > 0 && requests.every((request) => request.status < 400);
    row(scenario.name)['tiny GGUF'] = {
      pass,
      detail: `${requests.length} requests, ${statuses(requests)}; the CLI exited ${run.status}`,
    };
  }
  const replayed = [];
  for (const body of session.kept) replayed.push((await send(gguf, sent.get('plain-prompt')![0]!, body)).status);
  row('long-session')['tiny GGUF'] = {
    pass: replayed.length === 3 && replayed.every((status) => status === 200),
    detail: `the session's clearing, compacting and next requests replayed: ${replayed.join(', ') || 'none'}`,
  };
} finally {
  await gguf.proxy.close();
  await gguf.service.close();
}

const cell = (outcome: Outcome | undefined) =>
  outcome ? `${outcome.pass ? 'pass' : 'FAIL'}: ${outcome.detail}` : 'not run';
console.log(`\nClaude Code ${cli.version} against mms\n`);
console.log(['scenario', 'scripted backend', 'tiny GGUF'].join(' | '));
console.log('--- | --- | ---');
for (const [scenario, outcomes] of rows)
  console.log([scenario, cell(outcomes.scripted), cell(outcomes['tiny GGUF'])].join(' | '));
const failed = [...rows.values()].some((outcomes) => !outcomes.scripted?.pass || !outcomes['tiny GGUF']?.pass);
process.exit(failed ? 1 : 0);
