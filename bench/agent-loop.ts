/**
 * What the agent loop adds per step, next to what a step itself costs (issue 4; results in
 * docs/benchmarks.md, "Agent loop overhead"):
 *
 *   1. the same scripted steps consumed directly from the backend vs through runTurn, where
 *      every step but the last calls a server tool that answers at once: the difference per step
 *      is the loop's own work (block assembly, max_uses, the result block, usage parts);
 *   2. one step of the cheapest real engine (the tiny llama GGUF of the test suite, 16 tokens),
 *      which puts that overhead next to a model step.
 *
 *   node --import tsx bench/agent-loop.ts [--rounds 7] [--turns 2000]
 *
 * In-process, no HTTP. Arms alternate within each round; figures are medians over the rounds.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  parseMessageRequest,
  type ContentBlock,
  type MessageRequest,
  type ModelProfile,
  type ServerToolResultBlock,
} from '@model-messages/protocol';
import { tinyLlamaModel } from '@model-messages/testing';
import { runTurn } from '../packages/server/src/agent/run-turn.js';
import type { ServerToolRunner } from '../packages/server/src/agent/server-tool-runner.js';
import type { Backend } from '../packages/server/src/backends/backend.js';
import { buildModelPrompt, buildStepCall } from '../packages/server/src/call-builder/build-model-call.js';
import type { ModelCall } from '../packages/server/src/backends/call/model-call.js';
import { backendConfig } from '../packages/server/src/backends/backend-config.js';
import { withPlacedDefaults } from '../packages/server/src/backends/backend-placement.js';
import { Cancellation } from '../packages/server/src/backends/cancellation.js';
import { createBackend } from '../packages/server/src/backends/create-backend.js';
import { Signer } from '../packages/server/src/signing/signer.js';
import { median } from './statistics.js';

const STEPS_PER_TURN = 4;
const LLAMA_TOKENS = 16;

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, turns: { type: 'string', default: '2000' } },
});
const rounds = Number(values.rounds);
const turns = Number(values.turns);

const profile: ModelProfile = {
  id: 'bench',
  tier: 'mid',
  generation: 'newer',
  contextWindow: 4096,
  maxOutputTokens: 2048,
};

function writeScript(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mms-bench-loop-')), 'script.json');
  const call = { type: 'server_tool_use', name: 'web_fetch', input: { url: 'https://example.com/page' } };
  const steps = [
    ...Array.from({ length: STEPS_PER_TURN - 1 }, () => [{ type: 'text', text: 'Looking further.' }, call]),
    [{ type: 'text', text: 'The answer is ready.' }],
  ];
  writeFileSync(path, JSON.stringify([{ when: '^research', steps }]));
  return path;
}

const request = parseMessageRequest({
  model: 'bench',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'research https://example.com/page' }],
  tools: [{ type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: ['direct'] }],
});

/** Signs the turn's server call ids, as the service does. */
const signer = new Signer(randomBytes(32));

/** A server tool that answers at once, so that the loop's own cost is what is left. */
const instantTool: ServerToolRunner = {
  run: async (call): Promise<ServerToolResultBlock> => ({
    type: 'web_fetch_tool_result',
    tool_use_id: call.id,
    content: {
      type: 'web_fetch_result',
      url: 'https://example.com/page',
      content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'page text' } },
    },
  }),
};

const prompt = buildModelPrompt(request, profile);

/**
 * Step `step` of the turn, as the turn loop would build it: the script moves on by the server
 * results the turn holds, so each earlier step is one call and its result.
 */
function stepCall(step: number): ModelCall {
  const turnSoFar = Array.from({ length: step }, (_, index): ContentBlock[] => {
    const call: ContentBlock = { type: 'server_tool_use', id: `srvtoolu_${index}`, name: 'web_fetch', input: {} };
    return [
      call,
      { type: 'web_fetch_tool_result', tool_use_id: `srvtoolu_${index}`, content: { type: 'web_fetch_result' } },
    ];
  }).flat();
  return buildStepCall(prompt, request, { turnSoFar, step, outputBudget: 1024, fault: undefined });
}

async function directSteps(backend: Backend): Promise<void> {
  const cancellation = new Cancellation();
  for (let step = 0; step < STEPS_PER_TURN; step += 1) {
    for await (const batch of backend.stream(stepCall(step), cancellation)) void batch;
  }
}

async function loopTurn(backend: Backend): Promise<void> {
  const turn = runTurn({
    backend,
    request,
    prompt,
    model: profile,
    fault: undefined,
    maxSteps: 10,
    serverTools: instantTool,
    inputTokens: 20,
    cancellation: new Cancellation(),
    signer,
  });
  let finished = false;
  for await (const batch of turn)
    finished ||= batch.some((part) => part.type === 'finish' && part.stopReason === 'end_turn');
  if (!finished) throw new Error('the turn did not end as the script says');
}

async function timeTurns(run: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let index = 0; index < turns; index += 1) await run();
  return Number(process.hrtime.bigint() - start) / 1000 / turns / STEPS_PER_TURN;
}

/** What the model registry hands a backend, for one model of its own. */
const backendContext = {
  configFolder: process.cwd(),
  profile,
  load: 'eager',
  modelLabel: 'model bench',
  report: () => undefined,
  warn: undefined,
  now: undefined,
} as const;

async function llamaStepMicroseconds(): Promise<number> {
  const config = withPlacedDefaults([
    backendConfig.parse({ type: 'llama-cpp', model: await tinyLlamaModel(), threads: 1, contextSize: 1024 }),
  ])[0]!;
  const backend = createBackend(config, backendContext);
  await backend.prepare({ progress: false });
  const llamaRequest = parseMessageRequest({
    model: 'bench',
    max_tokens: LLAMA_TOKENS,
    messages: [{ role: 'user', content: 'Tell me a story.' }],
  });
  const samples: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const start = process.hrtime.bigint();
    const call = buildStepCall(buildModelPrompt(llamaRequest, profile), llamaRequest, {
      turnSoFar: [],
      step: 0,
      outputBudget: LLAMA_TOKENS,
      fault: undefined,
    });
    for await (const batch of backend.stream(call, new Cancellation())) void batch;
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  await backend.close();
  return median(samples);
}

const scripted = createBackend(
  withPlacedDefaults([backendConfig.parse({ type: 'scripted', script: writeScript() })])[0]!,
  backendContext,
);
await loopTurn(scripted);
await directSteps(scripted);
const direct: number[] = [];
const looped: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  direct.push(await timeTurns(() => directSteps(scripted)));
  looped.push(await timeTurns(() => loopTurn(scripted)));
}
const directStep = median(direct);
const loopStep = median(looped);
const overhead = loopStep - directStep;
const llamaStep = await llamaStepMicroseconds();

console.log(
  `agent loop, ${STEPS_PER_TURN} steps a turn (${STEPS_PER_TURN - 1} server calls), ${turns} turns x ${rounds} rounds, medians`,
);
console.log(`  scripted step consumed directly      ${directStep.toFixed(1)} us`);
console.log(
  `  the same step through runTurn        ${loopStep.toFixed(1)} us  (ratio ${(loopStep / directStep).toFixed(2)})`,
);
console.log(`  loop overhead per step               ${overhead.toFixed(1)} us`);
console.log(`  tiny llama step (${LLAMA_TOKENS} tokens, 1 thread)  ${(llamaStep / 1000).toFixed(2)} ms`);
console.log(`  overhead / llama step                ${((overhead / llamaStep) * 100).toFixed(3)} %`);
