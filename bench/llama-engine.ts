/**
 * The embedded llama.cpp engine, measured side by side in one run (see docs/benchmarks.md,
 * "Embedded llama.cpp engine"):
 *
 *   1. tokens/s through `POST /v1/messages` (non-streaming and streaming) vs node-llama-cpp
 *      called directly on the same model file with the same settings;
 *   2. grammar-constrained vs unconstrained tokens/s on the direct path;
 *   3. grammar compile time for the strict-schema battery (our compiler, llama.cpp's parser);
 *   4. the physical limit: bytes read per token x tokens/s against one core's memory bandwidth.
 *
 *   node --import tsx bench/llama-engine.ts [--rounds 7] [--tokens 64]
 *
 * Prints; asserts nothing about timing. The service and the direct engine each run in a child
 * process of their own (bench/llama/service-process.ts, bench/llama/direct-process.ts), so the
 * two differ in the code path only: neither shares a heap or event loop with the HTTP client
 * (this process) or with the other. Arms run in rotated order each round (A B C, B C A, C A B)
 * so that drift of a shared machine falls on all of them alike; every figure is the median over
 * the rounds. Each generation is timed twice: on the wall clock (the aims are about that) and
 * on the generating process's CPU clock, which leaves out time lost to other work on the machine.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { JSON_CLOSING_BIAS, parameterCount, TINY_LLAMA_BENCH_OPTIONS, tinyLlamaModel } from '@model-messages/testing';
import { tokenTraffic, type TokenTraffic } from './llama/bytes-per-token.js';
import { startDirectProcess } from './llama/direct-client.js';
import { llamaRuntime, type GenerationSample } from './llama/direct-engine.js';
import { timeGrammarCompile, type GrammarCompileTiming, type StepTiming } from './llama/grammar-compile.js';
import { measureMemoryBandwidth, type MemoryBandwidth } from './llama/memory-bandwidth.js';
import { MEDIUM_SCHEMA, STRICT_SCHEMA_BATTERY } from './llama/schemas.js';
import { generateThroughService, startServiceProcess, streamThroughService } from './llama/service-client.js';
import { CONTEXT_SIZE, PROMPT, THREADS } from './llama/shared-settings.js';
import { median } from './statistics.js';
import { positiveInteger } from './command-arguments.js';

const WARMUP_TOKENS = 8;
const SERVICE_AIM = 0.95;
const GRAMMAR_AIM = 0.85;

interface BenchSettings {
  rounds: number;
  tokens: number;
}

/** Defaults: seven short rounds rather than three long ones, as the median of seven is steadier on a shared machine. */
function readSettings(): BenchSettings {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '7' }, tokens: { type: 'string', default: '64' } },
  });
  return { rounds: positiveInteger(values.rounds, 'rounds'), tokens: positiveInteger(values.tokens, 'tokens') };
}

// --- rounds ------------------------------------------------------------------------------

interface Arm {
  label: string;
  run(): Promise<GenerationSample>;
}

interface ArmSummary {
  label: string;
  samples: GenerationSample[];
  /** Medians over the rounds. */
  tokensPerSecond: number;
  tokensPerCpuSecond: number;
  milliseconds: number;
  tokens: number;
}

function tokensPerSecond(sample: GenerationSample): number {
  return sample.tokens / (sample.milliseconds / 1000);
}

/** Tokens per second of the generating process's own CPU time: blind to time lost to other work on the machine. */
function tokensPerCpuSecond(sample: GenerationSample): number {
  return sample.tokens / (sample.cpuMilliseconds / 1000);
}

type Rate = (sample: GenerationSample) => number;

/** Round r starts at arm r: every arm runs first, middle and last equally often. */
function rotated<T>(items: readonly T[], round: number): T[] {
  return items.map((_, index) => items[(index + round) % items.length] as T);
}

function summarise(label: string, samples: GenerationSample[]): ArmSummary {
  return {
    label,
    samples,
    tokensPerSecond: median(samples.map(tokensPerSecond)),
    tokensPerCpuSecond: median(samples.map(tokensPerCpuSecond)),
    milliseconds: median(samples.map((sample) => sample.milliseconds)),
    tokens: median(samples.map((sample) => sample.tokens)),
  };
}

async function measureRounds(title: string, arms: readonly Arm[], rounds: number): Promise<Map<string, ArmSummary>> {
  const samples = new Map<string, GenerationSample[]>(arms.map((arm) => [arm.label, []]));
  console.log(`\n${title}`);
  for (let round = 0; round < rounds; round += 1) {
    for (const arm of rotated(arms, round)) {
      const sample = await arm.run();
      samples.get(arm.label)?.push(sample);
      console.log(
        `  round ${round + 1}: ${arm.label.padEnd(44)} ${String(sample.tokens).padStart(4)} tokens ${sample.milliseconds.toFixed(0).padStart(6)} ms ` +
          `${tokensPerSecond(sample).toFixed(2).padStart(6)} tokens/s  CPU ${(sample.cpuMilliseconds / sample.tokens).toFixed(1)} ms/token`,
      );
    }
  }
  return new Map(arms.map((arm) => [arm.label, summarise(arm.label, samples.get(arm.label) ?? [])]));
}

/** A short generation per arm first: loads the service's model and warms both code paths. */
async function warmUp(arms: readonly Arm[]): Promise<void> {
  for (const arm of arms) await arm.run();
}

function summaryOf(summaries: Map<string, ArmSummary>, label: string): ArmSummary {
  const summary = summaries.get(label);
  if (!summary) throw new Error(`no measurements for ${label}`);
  return summary;
}

// --- the measurements ----------------------------------------------------------------------

const SERVICE_JSON = 'service POST /v1/messages, non-streaming';
const SERVICE_STREAM = 'service POST /v1/messages, streaming';
const DIRECT = 'node-llama-cpp direct (LlamaChat)';
const DIRECT_GRAMMAR_IN_STRING = 'direct + grammar, plain model';
const BIASED_PLAIN = 'direct, JSON-biased model';
const BIASED_GRAMMAR = 'direct + grammar, JSON-biased model';

interface Models {
  plain: string;
  /** Same shape and size; only the output weights of '"', '}' and ']' differ, so JSON strings close. */
  jsonBiased: string;
}

async function prepareModels(): Promise<Models> {
  return {
    plain: await tinyLlamaModel(TINY_LLAMA_BENCH_OPTIONS),
    jsonBiased: await tinyLlamaModel({ ...TINY_LLAMA_BENCH_OPTIONS, logitBias: JSON_CLOSING_BIAS }),
  };
}

/** Part 1, plus the plain model under a grammar (a string that never closes: the grammar's cheapest case). */
async function measureServiceAndDirect(
  modelPath: string,
  settings: BenchSettings,
): Promise<{ summaries: Map<string, ArmSummary>; promptTokens: number }> {
  const service = await startServiceProcess(modelPath);
  const direct = await startDirectProcess(modelPath);
  try {
    const arms = (tokens: number): Arm[] => [
      { label: SERVICE_JSON, run: () => generateThroughService(service, PROMPT, tokens) },
      { label: SERVICE_STREAM, run: () => streamThroughService(service, PROMPT, tokens) },
      { label: DIRECT, run: () => direct.generate(tokens, false) },
      { label: DIRECT_GRAMMAR_IN_STRING, run: () => direct.generate(tokens, true) },
    ];
    await warmUp(arms(WARMUP_TOKENS));
    const summaries = await measureRounds(
      `service vs direct, ${settings.tokens} tokens per generation, plain model`,
      arms(settings.tokens),
      settings.rounds,
    );
    return { summaries, promptTokens: direct.promptTokens };
  } finally {
    await Promise.all([service.stop(), direct.stop()]);
  }
}

/** Part 2: the JSON-biased model closes strings, so a constrained generation walks the whole schema. */
async function measureGrammar(modelPath: string, settings: BenchSettings): Promise<Map<string, ArmSummary>> {
  const direct = await startDirectProcess(modelPath);
  try {
    const arms = (tokens: number): Arm[] => [
      { label: BIASED_PLAIN, run: () => direct.generate(tokens, false) },
      { label: BIASED_GRAMMAR, run: () => direct.generate(tokens, true) },
    ];
    await warmUp(arms(WARMUP_TOKENS));
    return await measureRounds(
      `grammar vs none, ${settings.tokens} tokens per generation, JSON-biased model`,
      arms(settings.tokens),
      settings.rounds,
    );
  } finally {
    await direct.stop();
  }
}

// --- report --------------------------------------------------------------------------------

const MEGABYTE = 1e6;
const GIGABYTE = 1e9;

function megabytes(bytes: number): string {
  return `${(bytes / MEGABYTE).toFixed(1)} MB`;
}

function gigabytesPerSecond(bytesPerSecond: number): string {
  return `${(bytesPerSecond / GIGABYTE).toFixed(2)} GB/s`;
}

/**
 * The ratio of the medians, with the aim; then the ratios within each round, whose arms ran
 * seconds apart, so that slow drift of the machine cancels out of them.
 */
function ratioText(numerator: ArmSummary, denominator: ArmSummary, rate: Rate, aim: number): string {
  const ratio = median(numerator.samples.map(rate)) / median(denominator.samples.map(rate));
  const perRound = numerator.samples.map((sample, round) => {
    const other = denominator.samples[round];
    return other ? rate(sample) / rate(other) : Number.NaN;
  });
  const spread = `per round: median ${median(perRound).toFixed(3)}, range ${Math.min(...perRound).toFixed(3)}–${Math.max(...perRound).toFixed(3)}`;
  return `${ratio.toFixed(3)} (aim >= ${aim}: ${ratio >= aim ? 'met' : 'NOT met'}; ${spread})`;
}

/** The aim is about wall-clock tokens/s; the CPU-time ratio says how much of a gap is work rather than waiting. */
function printRatio(title: string, numerator: ArmSummary, denominator: ArmSummary, aim: number): void {
  console.log(`ratio ${title}`);
  console.log(`  wall clock: ${ratioText(numerator, denominator, tokensPerSecond, aim)}`);
  console.log(`  CPU time:   ${ratioText(numerator, denominator, tokensPerCpuSecond, aim)}`);
}

function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  console.log(line(header));
  console.log(`| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`);
  for (const row of rows) console.log(line(row));
}

function generationRow(summary: ArmSummary): string[] {
  const rates = summary.samples.map(tokensPerSecond);
  return [
    summary.label,
    String(summary.tokens),
    summary.milliseconds.toFixed(0),
    summary.tokensPerSecond.toFixed(2),
    `${Math.min(...rates).toFixed(2)}–${Math.max(...rates).toFixed(2)}`,
    (1000 / summary.tokensPerSecond).toFixed(1),
    (1000 / summary.tokensPerCpuSecond).toFixed(1),
  ];
}

const GENERATION_HEADER = [
  'path',
  'tokens',
  'median ms',
  'tokens/s (median)',
  'tokens/s range',
  'wall ms/token',
  'CPU ms/token',
];

function printServiceReport(summaries: Map<string, ArmSummary>): void {
  const direct = summaryOf(summaries, DIRECT);
  console.log('\n1. Service vs direct (end to end: request sent to last byte received, prompt evaluation included)\n');
  printTable(
    GENERATION_HEADER,
    [SERVICE_JSON, SERVICE_STREAM, DIRECT].map((label) => generationRow(summaryOf(summaries, label))),
  );
  console.log('');
  printRatio('service non-streaming / direct', summaryOf(summaries, SERVICE_JSON), direct, SERVICE_AIM);
  printRatio('service streaming / direct', summaryOf(summaries, SERVICE_STREAM), direct, SERVICE_AIM);
}

function printGrammarReport(
  serviceSummaries: Map<string, ArmSummary>,
  grammarSummaries: Map<string, ArmSummary>,
): void {
  console.log(`\n2. Grammar-constrained vs unconstrained, direct path; grammar: ${MEDIUM_SCHEMA.name}\n`);
  const rows = [BIASED_PLAIN, BIASED_GRAMMAR].map((label) => generationRow(summaryOf(grammarSummaries, label)));
  rows.push(...[DIRECT, DIRECT_GRAMMAR_IN_STRING].map((label) => generationRow(summaryOf(serviceSummaries, label))));
  printTable(GENERATION_HEADER, rows);
  console.log('');
  printRatio(
    'grammar / none, JSON-biased model (walks the schema)',
    summaryOf(grammarSummaries, BIASED_GRAMMAR),
    summaryOf(grammarSummaries, BIASED_PLAIN),
    GRAMMAR_AIM,
  );
  printRatio(
    'grammar / none, plain model (stays in the first string)',
    summaryOf(serviceSummaries, DIRECT_GRAMMAR_IN_STRING),
    summaryOf(serviceSummaries, DIRECT),
    GRAMMAR_AIM,
  );
}

function compileRow(step: string, timing: StepTiming, schemaCount: number): string[] {
  return [
    step,
    timing.coldTotalMilliseconds.toFixed(2),
    timing.warmTotalMilliseconds.toFixed(2),
    (timing.warmTotalMilliseconds / schemaCount).toFixed(3),
    `${timing.slowestMilliseconds.toFixed(3)} (${timing.slowestSchema})`,
  ];
}

function printCompileReport(timing: GrammarCompileTiming): void {
  console.log(
    `\n3. Grammar compile time, strict-schema battery: ${timing.schemaCount} schemas, ${timing.ruleCount} GBNF rules, ${timing.gbnfBytes} bytes of GBNF\n`,
  );
  printTable(
    [
      'step',
      'total ms, first pass',
      'total ms, warm (sum of medians)',
      'mean ms per schema, warm',
      'slowest schema: median warm ms',
    ],
    [
      compileRow('jsonSchemaToGbnf (ours)', timing.compile, timing.schemaCount),
      compileRow('llama.createGrammar (llama.cpp parse)', timing.parse, timing.schemaCount),
    ],
  );
}

function printLimitReport(traffic: TokenTraffic, bandwidth: MemoryBandwidth, summaries: Map<string, ArmSummary>): void {
  const bytesPerToken = traffic.weightBytes + traffic.kvCacheBytes;
  console.log("\n4. Physical limit: bytes read per generated token x tokens/s vs one core's memory bandwidth\n");
  console.log(
    `model file ${megabytes(traffic.fileBytes)}; read per token: weights ${megabytes(traffic.weightBytes)} (all but one row of the embedding table)`,
  );
  console.log(
    `+ KV cache ${megabytes(traffic.kvCacheBytes)} (F16, mean position ${traffic.meanPosition.toFixed(0)}) = ${megabytes(bytesPerToken)}`,
  );
  console.log(
    `memory bandwidth, 1 thread, ${bandwidth.bufferBytes / 2 ** 20} MiB buffers, best of ${bandwidth.repetitions}: ` +
      `copy ${gigabytesPerSecond(bandwidth.copyBytesPerSecond)} (read + write), read ${gigabytesPerSecond(bandwidth.readBytesPerSecond)} (memcmp)`,
  );
  console.log(
    `memory-bound ceiling at the copy bandwidth: ${(bandwidth.copyBytesPerSecond / bytesPerToken).toFixed(1)} tokens/s\n`,
  );
  // Per CPU second as well: the bandwidth figures are best-of-5, i.e. taken while the copy had a core to itself.
  const rows = [DIRECT, SERVICE_JSON].flatMap((label) => {
    const summary = summaryOf(summaries, label);
    const rates: Array<[clock: string, tokensPerSecond: number]> = [
      ['wall clock', summary.tokensPerSecond],
      ['CPU time', summary.tokensPerCpuSecond],
    ];
    return rates.map(([clock, rate]) => {
      const achieved = rate * bytesPerToken;
      return [
        label,
        clock,
        gigabytesPerSecond(achieved),
        (achieved / bandwidth.copyBytesPerSecond).toFixed(2),
        (achieved / bandwidth.readBytesPerSecond).toFixed(2),
      ];
    });
  });
  printTable(['path', 'tokens/s by', 'achieved', 'achieved / copy bandwidth', 'achieved / read bandwidth'], rows);
}

function printHeader(settings: BenchSettings, models: Models): void {
  const [oneMinute = 0, fiveMinutes = 0] = loadavg();
  const cores = cpus().length;
  console.log(
    `node ${process.version}, ${cores} cores (${cpus()[0]?.model ?? 'unknown CPU'}), load average ${oneMinute.toFixed(2)} / ${fiveMinutes.toFixed(2)} (1 / 5 min)`,
  );
  if (oneMinute >= cores - 1) {
    console.log(
      `NOTE: other work keeps the machine busy; wall-clock figures include time spent waiting for a core, the CPU-time figures do not`,
    );
  }
  console.log(
    `model: ${(parameterCount(TINY_LLAMA_BENCH_OPTIONS) / 1e6).toFixed(1)}M parameters, F16 (${models.plain})`,
  );
  console.log(
    `settings: threads ${THREADS}, context ${CONTEXT_SIZE}, temperature 1, ${settings.tokens} tokens per generation, ${settings.rounds} rounds, prompt ${JSON.stringify(PROMPT)}`,
  );
}

// --- main --------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings();
  const started = performance.now();
  // First, while nothing else of the benchmark is in memory or running.
  const bandwidth = measureMemoryBandwidth();
  const models = await prepareModels();
  printHeader(settings, models);
  const llama = await llamaRuntime();
  const compileTiming = await timeGrammarCompile(llama, STRICT_SCHEMA_BATTERY);
  const part1 = await measureServiceAndDirect(models.plain, settings);
  const part2 = await measureGrammar(models.jsonBiased, settings);
  const traffic = await tokenTraffic(models.plain, part1.promptTokens, summaryOf(part1.summaries, DIRECT).tokens);
  printServiceReport(part1.summaries);
  printGrammarReport(part1.summaries, part2);
  printCompileReport(compileTiming);
  printLimitReport(traffic, bandwidth, part1.summaries);
  console.log(`\ntotal run time ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

await main();
