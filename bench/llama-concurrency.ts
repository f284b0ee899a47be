/**
 * Concurrency on the embedded llama.cpp engine (issue 19), measured side by side in one run (see
 * docs/benchmarks.md, "Issue 19: concurrent requests on the embedded engine"): aggregate decode
 * tokens/s of 1 and of 4 requests at once on the 125M-parameter test model, through mms
 * (`concurrency: 4`, one context of four sequences) and through node-llama-cpp driven directly
 * the same way (one context of four sequences, a LlamaChat per generation, all four generating
 * at once, batched as node-llama-cpp does by default).
 *
 *   node --import tsx bench/llama-concurrency.ts [--rounds 5] [--tokens 64] [--threads 1] [--type Q4_0]
 *
 * `--type`: the matrices' type (F16, Q8_0 or Q4_0; Q4_0 by default, as CPUs run models quantized).
 *
 * A fifth arm, "batched x4", is node-llama-cpp driven directly with the service's batching strategy
 * (packages/server/src/backends/llama-cpp/sequence-batching.ts) on a second context: the same
 * batches as mms forms, so mms x4 against it is what the service's own layers cost.
 *
 * Prints; asserts nothing about timing. mms runs in a child process (bench/llama/service-process.ts);
 * the direct engine in this process while the service is idle. Every request is greedy on the
 * same short prompt (each side keeps its sequences' prefixes alike); the clock runs from sending
 * the requests to the last one's end, and tokens are what each side's usage counts. Arms rotate
 * their order each round; figures are medians.
 */
import { parseArgs } from 'node:util';
import { LlamaChat, resolveChatWrapper, type ChatWrapper, type LlamaContextSequence } from 'node-llama-cpp';
import { parameterCount, TINY_LLAMA_BENCH_OPTIONS, tinyLlamaModel, type GgufTensorType } from '@model-messages/testing';
import { positiveInteger } from './command-arguments.js';
import { llamaRuntime, singleTurnHistory } from './llama/direct-engine.js';
import { REQUEST_HEADERS, startServiceProcess, type ServiceProcess } from './llama/service-client.js';
import { MODEL_ID, PROMPT, THREADS } from './llama/shared-settings.js';
import { median } from './statistics.js';
import { createBatchedContext } from '../packages/server/src/backends/llama-cpp/sequence-batching.js';

const SEQUENCES = 4;
/** Tokens per sequence, on both sides. */
const CONTEXT_SIZE = 1024;
const SCALING_AIM = 2;
const DIRECT_AIM = 0.95;

const TENSOR_TYPES: readonly GgufTensorType[] = ['F16', 'Q8_0', 'Q4_0'];

interface Settings {
  rounds: number;
  tokens: number;
  threads: number;
  tensorType: GgufTensorType;
}

/** `threads`: llama.cpp's, on both sides; more than the default 1 only where there are cores for them. */
function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '5' },
      tokens: { type: 'string', default: '64' },
      threads: { type: 'string', default: String(THREADS) },
      type: { type: 'string', default: 'Q4_0' },
    },
  });
  const tensorType = TENSOR_TYPES.find((type) => type === values.type);
  if (tensorType === undefined) throw new Error(`--type must be one of ${TENSOR_TYPES.join(', ')}, got ${values.type}`);
  return {
    rounds: positiveInteger(values.rounds, 'rounds'),
    tokens: positiveInteger(values.tokens, 'tokens'),
    threads: positiveInteger(values.threads, 'threads'),
    tensorType,
  };
}

interface Sample {
  tokens: number;
  milliseconds: number;
}

async function throughService(service: ServiceProcess, requests: number, maxTokens: number): Promise<Sample> {
  const body = JSON.stringify({
    model: MODEL_ID,
    max_tokens: maxTokens,
    temperature: 0,
    messages: [{ role: 'user', content: PROMPT }],
  });
  const started = performance.now();
  const replies = await Promise.all(
    Array.from({ length: requests }, async () => {
      const response = await fetch(service.url, { method: 'POST', headers: REQUEST_HEADERS, body });
      if (response.status !== 200) throw new Error(`the service answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as { usage: { output_tokens: number } };
    }),
  );
  const milliseconds = performance.now() - started;
  return { tokens: replies.reduce((total, reply) => total + reply.usage.output_tokens, 0), milliseconds };
}

async function direct(
  sequences: LlamaContextSequence[],
  chatWrapper: ChatWrapper,
  requests: number,
  maxTokens: number,
): Promise<Sample> {
  const started = performance.now();
  const counts = await Promise.all(
    sequences.slice(0, requests).map(async (sequence) => {
      const before = sequence.tokenMeter.usedOutputTokens;
      const chat = new LlamaChat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: false });
      try {
        await chat.generateResponse(singleTurnHistory(PROMPT), { maxTokens, temperature: 0 });
      } finally {
        chat.dispose();
      }
      return sequence.tokenMeter.usedOutputTokens - before;
    }),
  );
  const milliseconds = performance.now() - started;
  return { tokens: counts.reduce((total, count) => total + count, 0), milliseconds };
}

const perSecond = (sample: Sample) => (sample.tokens * 1000) / sample.milliseconds;

async function main(): Promise<void> {
  const settings = readSettings();
  const modelOptions = { ...TINY_LLAMA_BENCH_OPTIONS, tensorType: settings.tensorType };
  const modelPath = await tinyLlamaModel(modelOptions);
  const llama = await llamaRuntime();
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({
    contextSize: CONTEXT_SIZE,
    sequences: SEQUENCES,
    threads: settings.threads,
  });
  const sequences = Array.from({ length: SEQUENCES }, () => context.getSequence());
  const batchedContext = await createBatchedContext(model, {
    contextSize: CONTEXT_SIZE,
    sequences: SEQUENCES,
    threads: settings.threads,
  });
  const batchedSequences = Array.from({ length: SEQUENCES }, () => batchedContext.getSequence());
  const chatWrapper = resolveChatWrapper(model);
  const service = await startServiceProcess(modelPath, {
    contextWindow: CONTEXT_SIZE,
    backend: { concurrency: SEQUENCES, threads: settings.threads },
  });
  console.log(
    `model: ${(parameterCount(modelOptions) / 1e6).toFixed(0)}M parameters (${settings.tensorType}), ` +
      `${SEQUENCES} sequences of ${CONTEXT_SIZE} tokens, threads ${settings.threads}; ` +
      `${settings.tokens} greedy tokens per request; ${settings.rounds} rounds`,
  );
  type Label = 'mms x1' | 'mms x4' | 'direct x1' | 'direct x4' | 'batched x4';
  const arms: Array<[Label, () => Promise<Sample>]> = [
    ['mms x1', () => throughService(service, 1, settings.tokens)],
    ['mms x4', () => throughService(service, SEQUENCES, settings.tokens)],
    ['direct x1', () => direct(sequences, chatWrapper, 1, settings.tokens)],
    ['direct x4', () => direct(sequences, chatWrapper, SEQUENCES, settings.tokens)],
    ['batched x4', () => direct(batchedSequences, chatWrapper, SEQUENCES, settings.tokens)],
  ];
  const rates = new Map<Label, number[]>(arms.map(([label]) => [label, []]));
  try {
    // A warm-up of each arm: the first generation pays for first-touch allocations.
    for (const [, run] of arms) await run();
    for (let round = 0; round < settings.rounds; round += 1) {
      const rotated = [...arms.slice(round % arms.length), ...arms.slice(0, round % arms.length)];
      for (const [label, run] of rotated) {
        const sample = await run();
        rates.get(label)!.push(perSecond(sample));
        console.log(
          `round ${round + 1} ${label.padEnd(9)} ${sample.tokens} tokens in ${sample.milliseconds.toFixed(0)} ms: ` +
            `${perSecond(sample).toFixed(1)} tokens/s`,
        );
      }
    }
  } finally {
    await service.stop();
    await context.dispose();
    await batchedContext.dispose();
    await model.dispose();
  }
  const rate = (label: Label) => median(rates.get(label)!);
  console.log('\n| requests at once | mms tokens/s | node-llama-cpp tokens/s | mms / direct |');
  console.log('|---:|---:|---:|---:|');
  for (const count of [1, SEQUENCES]) {
    const [ours, theirs] = [rate(`mms x${count}` as Label), rate(`direct x${count}` as Label)];
    console.log(`| ${count} | ${ours.toFixed(1)} | ${theirs.toFixed(1)} | ${(ours / theirs).toFixed(3)} |`);
  }
  console.log(
    `\nnode-llama-cpp x${SEQUENCES} with the service's batching strategy: ${rate('batched x4').toFixed(1)} tokens/s; ` +
      `mms x${SEQUENCES} / it = ${(rate('mms x4') / rate('batched x4')).toFixed(3)}`,
  );
  console.log(
    `mms x${SEQUENCES} / mms x1 = ${(rate('mms x4') / rate('mms x1')).toFixed(2)} (aim >= ${SCALING_AIM}); ` +
      `mms x${SEQUENCES} / direct x${SEQUENCES} = ${(rate('mms x4') / rate('direct x4')).toFixed(3)} (aim >= ${DIRECT_AIM})`,
  );
}

await main();
