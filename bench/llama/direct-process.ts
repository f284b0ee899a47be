/**
 * node-llama-cpp called directly, in a process of its own: the same isolation the service gets
 * (bench/llama/service-process.ts), so that the comparison differs in the code path only, not
 * in the heap, garbage or event loop it shares. Generates on request over IPC and times each
 * generation itself; the IPC round trip is outside the clock.
 */
import { jsonSchemaToGbnf } from '../../packages/server/src/grammar/json-schema-to-gbnf.js';
import { DirectEngine } from './direct-engine.js';
import { MEDIUM_SCHEMA } from './schemas.js';
import { CONTEXT_SIZE, PROMPT, THREADS } from './shared-settings.js';

export interface DirectRequest {
  maxTokens: number;
  /** Generate under the grammar of MEDIUM_SCHEMA. */
  constrained: boolean;
}

export interface DirectReady {
  promptTokens: number;
}

function modelPathFromArguments(): string {
  const [modelPath] = process.argv.slice(2);
  if (modelPath === undefined) throw new Error('usage: direct-process.ts <model.gguf>');
  return modelPath;
}

function readRequest(message: unknown): DirectRequest {
  const request = message as Partial<DirectRequest> | null;
  if (typeof request?.maxTokens !== 'number' || typeof request.constrained !== 'boolean')
    throw new Error(`not a generation request: ${JSON.stringify(message)}`);
  return { maxTokens: request.maxTokens, constrained: request.constrained };
}

async function main(): Promise<void> {
  const engine = await DirectEngine.load(modelPathFromArguments(), { contextSize: CONTEXT_SIZE, threads: THREADS });
  const grammar = await engine.llama.createGrammar({ grammar: jsonSchemaToGbnf(MEDIUM_SCHEMA.schema) });
  // One generation at a time, as the parent asks: a queue keeps a stray second request from overlapping.
  let pending = Promise.resolve();
  process.on('message', (message) => {
    pending = pending.then(async () => {
      const request = readRequest(message);
      const sample = await engine.generate(PROMPT, request.maxTokens, request.constrained ? grammar : undefined);
      process.send?.(sample);
    });
  });
  process.on('disconnect', () => {
    void pending.then(() => engine.close()).then(() => process.exit(0));
  });
  const ready: DirectReady = { promptTokens: engine.promptTokens(PROMPT) };
  process.send?.(ready);
}

if (process.send === undefined) {
  throw new Error('bench/llama/direct-process.ts is started by bench/llama-engine.ts (it needs an IPC channel)');
}
await main();
