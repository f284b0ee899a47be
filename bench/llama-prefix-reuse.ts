/**
 * Prefix reuse on the embedded llama.cpp engine (issue 19), measured side by side in one run (see
 * docs/benchmarks.md, "Prefix reuse"): a 10-turn conversation under a long system prompt (6,000
 * tokens by default) on the 125M-parameter test model, and the time to first token of its last
 * turn, three ways:
 *
 *   reused   mms, the conversation's earlier turns sent first, so a sequence holds their prefix;
 *   cold     mms with `reusePrefix: false`, the same last request, evaluated whole;
 *   session  node-llama-cpp's own LlamaChatSession, which keeps its sequence across the turns.
 *
 *   node --import tsx bench/llama-prefix-reuse.ts [--rounds 3] [--system-tokens 6000] [--turns 10]
 *
 * Prints; asserts nothing about timing. Each mms arm is a service in a child process
 * (bench/llama/service-process.ts); the session runs in this process while the services are
 * idle. Every turn is greedy with 16 output tokens, and each mms turn sends back the replies
 * mms gave, as a client does. In each round the reused and session conversations go in
 * lockstep, a turn of each in turn (the first of each pair alternating), so that the machine's
 * drift in speed, which on this VM doubles a turn's time within minutes, falls on both; then the
 * cold arm sends the reused arm's last request. Figures are medians over the rounds; the
 * session's line also says how many tokens it evaluated for its last turn (its sequence's
 * token meter), beside mms's usage.
 */
import { parseArgs } from 'node:util';
import { LlamaChatSession } from 'node-llama-cpp';
import { parameterCount, TINY_LLAMA_BENCH_OPTIONS, tinyLlamaModel } from '@model-messages/testing';
import { positiveInteger } from './command-arguments.js';
import { llamaRuntime } from './llama/direct-engine.js';
import { streamTurn, systemPrompt, type Message } from './llama/conversation-requests.js';
import { startServiceProcess, type ServiceProcess } from './llama/service-client.js';
import { THREADS } from './llama/shared-settings.js';
import { median } from './statistics.js';

/** The bench model with room for the long prefix and ten turns. */
const MODEL_OPTIONS = { ...TINY_LLAMA_BENCH_OPTIONS, contextLength: 8192 };
const CONTEXT_SIZE = 8192;
const TURN_TOKENS = 16;
const REUSED_AIM = 0.15;

interface Settings {
  rounds: number;
  systemTokens: number;
  turns: number;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      'system-tokens': { type: 'string', default: '6000' },
      turns: { type: 'string', default: '10' },
    },
  });
  return {
    rounds: positiveInteger(values.rounds, 'rounds'),
    systemTokens: positiveInteger(values['system-tokens'], 'system-tokens'),
    turns: positiveInteger(values.turns, 'turns'),
  };
}

const question = (round: number, turn: number) =>
  `Round ${round}, question ${turn + 1}: what should the keeper check next, and why?`;

interface TurnResult {
  milliseconds: number;
  usage?: unknown;
  /** The session's: tokens its sequence evaluated for the turn's prompt, before its first text. */
  evaluatedTokens?: number;
}

/** One side of the conversation, a turn at a time. */
interface Conversation {
  turn(turn: number): Promise<TurnResult>;
}

/**
 * mms, keeping prefixes: each turn sends the whole conversation so far, mms's own replies
 * included, as a client does.
 */
function reusedConversation(service: ServiceProcess, system: string, round: number, messages: Message[]): Conversation {
  return {
    async turn(turn) {
      messages.push({ role: 'user', content: question(round, turn) });
      const reply = await streamTurn(service, system, messages, TURN_TOKENS);
      // An empty reply is not a valid assistant turn; a client would send what it got, or a placeholder.
      messages.push({ role: 'assistant', content: reply.text === '' ? '(no answer)' : reply.text });
      return { milliseconds: reply.firstTokenMilliseconds, usage: reply.usage };
    },
  };
}

/** node-llama-cpp's own chat session on one sequence, kept across the turns. */
function sessionConversation(chat: LlamaChatSession, round: number): Conversation {
  const meter = chat.sequence.tokenMeter;
  return {
    async turn(turn) {
      const started = performance.now();
      const evaluatedBefore = meter.usedInputTokens;
      let first: number | undefined;
      let evaluatedTokens = 0;
      await chat.prompt(question(round, turn), {
        maxTokens: TURN_TOKENS,
        temperature: 0,
        onTextChunk: () => {
          if (first !== undefined) return;
          first = performance.now() - started;
          evaluatedTokens = meter.usedInputTokens - evaluatedBefore;
        },
      });
      return { milliseconds: first ?? performance.now() - started, evaluatedTokens };
    },
  };
}

/**
 * The reused and session arms in lockstep, a turn of each in turn (which goes first alternates),
 * so that a change in the machine's speed during the round falls on both. Returns their last
 * turns, and the last request mms was sent (without mms's reply to it).
 */
async function conversationsInLockstep(
  service: ServiceProcess,
  chat: LlamaChatSession,
  system: string,
  round: number,
  turns: number,
): Promise<{ reused: TurnResult; session: TurnResult; lastRequest: Message[] }> {
  const messages: Message[] = [];
  const reused = reusedConversation(service, system, round, messages);
  const session = sessionConversation(chat, round);
  let last: { reused?: TurnResult; session?: TurnResult } = {};
  for (let turn = 0; turn < turns; turn += 1) {
    last = {};
    const order = (round + turn) % 2 === 0 ? (['reused', 'session'] as const) : (['session', 'reused'] as const);
    for (const arm of order) last[arm] = await (arm === 'reused' ? reused : session).turn(turn);
  }
  return { reused: last.reused!, session: last.session!, lastRequest: messages.slice(0, -1) };
}

async function main(): Promise<void> {
  const settings = readSettings();
  const modelPath = await tinyLlamaModel(MODEL_OPTIONS);
  const llama = await llamaRuntime();
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ contextSize: CONTEXT_SIZE, sequences: 1, threads: THREADS });
  const sequence = context.getSequence();
  const system = systemPrompt(settings.systemTokens, (text) => model.tokenize(text));
  const service = (reusePrefix: boolean) =>
    startServiceProcess(modelPath, { contextWindow: CONTEXT_SIZE, backend: { reusePrefix } });
  const [warm, cold] = [await service(true), await service(false)];
  console.log(
    `model: ${(parameterCount(MODEL_OPTIONS) / 1e6).toFixed(0)}M parameters (F16), context ${CONTEXT_SIZE}, ` +
      `threads ${THREADS}; system prompt ${model.tokenize(system).length} tokens; ${settings.turns} turns of ` +
      `${TURN_TOKENS} greedy tokens; ${settings.rounds} rounds`,
  );
  const samples: Record<'reused' | 'cold' | 'session', number[]> = { reused: [], cold: [], session: [] };
  try {
    for (let round = 0; round < settings.rounds; round += 1) {
      const chat = new LlamaChatSession({
        contextSequence: sequence,
        systemPrompt: system,
        autoDisposeSequence: false,
      });
      const lockstep = await conversationsInLockstep(warm, chat, system, round, settings.turns);
      chat.dispose();
      // The cold arm last: the very request the reused arm sent on its last turn.
      const results = { ...lockstep, cold: await coldTurn(cold, system, lockstep.lastRequest) };
      for (const label of ['reused', 'session', 'cold'] as const) {
        const result = results[label];
        samples[label].push(result.milliseconds);
        console.log(
          `round ${round + 1} ${label.padEnd(7)} turn ${settings.turns} first token ${result.milliseconds.toFixed(1)} ms` +
            (result.usage ? ` usage ${JSON.stringify(result.usage)}` : '') +
            (result.evaluatedTokens === undefined ? '' : ` evaluated ${result.evaluatedTokens} tokens`),
        );
      }
    }
  } finally {
    await warm.stop();
    await cold.stop();
    await context.dispose();
    await model.dispose();
  }
  const [reused, coldMedian, sessionMedian] = [median(samples.reused), median(samples.cold), median(samples.session)];
  console.log('\n| arm | turn-10 time to first token (median) | vs cold |');
  console.log('|---|---:|---:|');
  console.log(`| mms, prefix reused | ${reused.toFixed(1)} ms | ${(reused / coldMedian).toFixed(3)} |`);
  console.log(`| mms, cold (reusePrefix: false) | ${coldMedian.toFixed(1)} ms | 1.000 |`);
  console.log(
    `| node-llama-cpp LlamaChatSession | ${sessionMedian.toFixed(1)} ms | ${(sessionMedian / coldMedian).toFixed(3)} |`,
  );
  console.log(
    `\nreused / cold = ${(reused / coldMedian).toFixed(3)} (aim <= ${REUSED_AIM}); ` +
      `reused / session = ${(reused / sessionMedian).toFixed(3)} (aim <= 1)`,
  );
  // The paired figure: each round's two last turns ran back to back, so their ratio is the least
  // touched by the machine's drift.
  const paired = samples.reused.map((milliseconds, round) => milliseconds / samples.session[round]!);
  console.log(
    `reused / session per round: ${paired.map((ratio) => ratio.toFixed(3)).join(', ')}; ` +
      `median ${median(paired).toFixed(3)} (aim <= 1)`,
  );
}

/** The cold arm: the reused arm's last request, evaluated whole. */
async function coldTurn(cold: ServiceProcess, system: string, messages: Message[]): Promise<TurnResult> {
  const reply = await streamTurn(cold, system, messages, TURN_TOKENS);
  return { milliseconds: reply.firstTokenMilliseconds, usage: reply.usage };
}

await main();
