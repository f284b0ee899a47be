/**
 * A prefix copied between sequences on the embedded llama.cpp engine (issue 19; see
 * docs/benchmarks.md, "Prefix copied from another sequence"): a new conversation arrives under a
 * long system prompt (3,000 tokens by default) while another conversation generates on the only
 * sequence that holds it, on the 125M-parameter test model with two sequences. Its time to
 * first token, two ways:
 *
 *   copied   mms as configured by default: the new request's sequence copies the system prompt's
 *            KV cache from the generating one, and evaluates only its own turn;
 *   cold     mms with `reusePrefix: false`: the same requests, each evaluated whole.
 *
 *   node --import tsx bench/llama-prefix-copy.ts [--rounds 3] [--system-tokens 3000]
 *
 * Prints; asserts nothing about timing. Each arm is a service in a child process
 * (bench/llama/service-process.ts). Each round gives both arms a system prompt of its own (so no
 * sequence holds it from an earlier round), then, per arm (their order alternating): a first turn
 * of conversation A, which leaves the prompt on a sequence; A's second turn, streamed and long,
 * and once its first token is out, conversation B's first turn, timed. Figures are medians.
 */
import { parseArgs } from 'node:util';
import { parameterCount, TINY_LLAMA_BENCH_OPTIONS, tinyLlamaModel } from '@model-messages/testing';
import { positiveInteger } from './command-arguments.js';
import { llamaRuntime } from './llama/direct-engine.js';
import { streamTurn, systemPrompt } from './llama/conversation-requests.js';
import { startServiceProcess, type ServiceProcess } from './llama/service-client.js';
import { median } from './statistics.js';

const MODEL_OPTIONS = { ...TINY_LLAMA_BENCH_OPTIONS, contextLength: 8192 };
const CONTEXT_SIZE = 8192;
const TURN_TOKENS = 16;
/** A's second turn: long enough to be generating when B arrives. */
const RUNNING_TOKENS = 400;
const COPIED_AIM = 0.15;

function readSettings(): { rounds: number; systemTokens: number } {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      'system-tokens': { type: 'string', default: '3000' },
    },
  });
  return {
    rounds: positiveInteger(values.rounds, 'rounds'),
    systemTokens: positiveInteger(values['system-tokens'], 'system-tokens'),
  };
}

interface Sample {
  milliseconds: number;
  usage: unknown;
}

/** A's first turn, then B's first turn while A's second one generates. */
async function newConversationWhileAnotherGenerates(service: ServiceProcess, system: string): Promise<Sample> {
  const first = await streamTurn(
    service,
    system,
    [{ role: 'user', content: 'Conversation A: which lamp first?' }],
    TURN_TOKENS,
  );
  let started!: () => void;
  const generating = new Promise<void>((resolve) => (started = resolve));
  const running = streamTurn(
    service,
    system,
    [
      { role: 'user', content: 'Conversation A: which lamp first?' },
      { role: 'assistant', content: first.text === '' ? '(no answer)' : first.text },
      { role: 'user', content: 'Conversation A: and then, in detail?' },
    ],
    RUNNING_TOKENS,
    started,
  );
  await generating;
  const fresh = await streamTurn(
    service,
    system,
    [{ role: 'user', content: 'Conversation B: what does the keeper log?' }],
    TURN_TOKENS,
  );
  await running;
  return { milliseconds: fresh.firstTokenMilliseconds, usage: fresh.usage };
}

async function main(): Promise<void> {
  const settings = readSettings();
  const modelPath = await tinyLlamaModel(MODEL_OPTIONS);
  const model = await (await llamaRuntime()).loadModel({ modelPath, vocabOnly: true });
  const service = (reusePrefix: boolean) =>
    startServiceProcess(modelPath, { contextWindow: CONTEXT_SIZE, backend: { reusePrefix, concurrency: 2 } });
  const arms: Record<'copied' | 'cold', ServiceProcess> = { copied: await service(true), cold: await service(false) };
  const samples: Record<'copied' | 'cold', number[]> = { copied: [], cold: [] };
  try {
    const base = systemPrompt(settings.systemTokens, (text) => model.tokenize(text));
    console.log(
      `model: ${(parameterCount(MODEL_OPTIONS) / 1e6).toFixed(0)}M parameters (F16), context ${CONTEXT_SIZE}, two ` +
        `sequences; system prompt ${model.tokenize(base).length} tokens; ${settings.rounds} rounds`,
    );
    for (let round = 0; round < settings.rounds; round += 1) {
      const system = `Round ${round + 1}.\n${base}`;
      const order = round % 2 === 0 ? (['copied', 'cold'] as const) : (['cold', 'copied'] as const);
      for (const arm of order) {
        const sample = await newConversationWhileAnotherGenerates(arms[arm], system);
        samples[arm].push(sample.milliseconds);
        console.log(
          `round ${round + 1} ${arm.padEnd(6)} B's first token ${sample.milliseconds.toFixed(1)} ms ` +
            `usage ${JSON.stringify(sample.usage)}`,
        );
      }
    }
  } finally {
    await arms.copied.stop();
    await arms.cold.stop();
    await model.dispose();
  }
  const [copied, cold] = [median(samples.copied), median(samples.cold)];
  console.log('\n| arm | new conversation, time to first token (median) | vs cold |');
  console.log('|---|---:|---:|');
  console.log(
    `| mms, system prompt copied from the generating sequence | ${copied.toFixed(1)} ms | ` +
      `${(copied / cold).toFixed(3)} |`,
  );
  console.log(`| mms, cold (reusePrefix: false) | ${cold.toFixed(1)} ms | 1.000 |`);
  console.log(`\ncopied / cold = ${(copied / cold).toFixed(3)} (aim <= ${COPIED_AIM}, as for a reused prefix)`);
}

await main();
