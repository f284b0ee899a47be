/** The parent's handle on bench/llama/direct-process.ts: node-llama-cpp called directly, in a child. */
import { askChild, startBenchChild } from './child-process.js';
import type { GenerationSample } from './direct-engine.js';
import type { DirectReady, DirectRequest } from './direct-process.js';

export interface DirectProcess {
  /** The prompt's length in tokens after chat formatting. */
  promptTokens: number;
  generate(maxTokens: number, constrained: boolean): Promise<GenerationSample>;
  stop(): Promise<void>;
}

function readSample(message: unknown): GenerationSample {
  const sample = message as Partial<GenerationSample> | null;
  if (
    typeof sample?.tokens !== 'number' ||
    typeof sample.milliseconds !== 'number' ||
    typeof sample.cpuMilliseconds !== 'number'
  ) {
    throw new Error(`not a generation sample: ${JSON.stringify(message)}`);
  }
  return { tokens: sample.tokens, milliseconds: sample.milliseconds, cpuMilliseconds: sample.cpuMilliseconds };
}

function readReady(message: unknown): DirectReady {
  const ready = message as Partial<DirectReady> | null;
  if (typeof ready?.promptTokens !== 'number')
    throw new Error(`expected { promptTokens } from the direct engine, got ${JSON.stringify(message)}`);
  return { promptTokens: ready.promptTokens };
}

export async function startDirectProcess(modelPath: string): Promise<DirectProcess> {
  const child = await startBenchChild('./direct-process.ts', [modelPath]);
  return {
    promptTokens: readReady(child.ready).promptTokens,
    generate: async (maxTokens, constrained) => {
      const request: DirectRequest = { maxTokens, constrained };
      return readSample(await askChild(child, { ...request }));
    },
    stop: () => child.stop(),
  };
}
