/**
 * Time to turn each schema of the strict battery into a grammar: our JSON Schema -> GBNF compiler,
 * then llama.cpp's GBNF parser (node-llama-cpp's createGrammar). Both run on every request with a
 * strict tool or output format whose grammar is not cached yet.
 */
import type { Llama } from 'node-llama-cpp';
import { jsonSchemaToGbnf } from '../../packages/server/src/grammar/json-schema-to-gbnf.js';
import type { NamedSchema } from './schemas.js';
import { median } from '../statistics.js';

export interface StepTiming {
  /** First pass over the battery: includes JIT compilation of the code being timed. */
  coldTotalMilliseconds: number;
  /**
   * The battery's warm time: the sum of each schema's median over the later passes, so that a pass
   * hit by a garbage-collection pause or by another process taking the core does not set it.
   */
  warmTotalMilliseconds: number;
  /** The schema with the largest median warm time, and that time. */
  slowestSchema: string;
  slowestMilliseconds: number;
}

export interface GrammarCompileTiming {
  schemaCount: number;
  ruleCount: number;
  gbnfBytes: number;
  compile: StepTiming;
  parse: StepTiming;
}

const COMPILE_PASSES = 20;
const PARSE_PASSES = 10;

interface PassTimes {
  /** Milliseconds of each whole pass over the battery. */
  passTotals: number[];
  /** Per schema, its milliseconds in each warm pass (all passes but the first). */
  warmPerSchema: number[][];
}

/** Runs `step` over every schema `passes` times. */
async function timePasses(count: number, passes: number, step: (index: number) => unknown): Promise<PassTimes> {
  const times: PassTimes = { passTotals: [], warmPerSchema: Array.from({ length: count }, () => []) };
  for (let pass = 0; pass < passes; pass += 1) {
    let passTotal = 0;
    for (let index = 0; index < count; index += 1) {
      const started = performance.now();
      const result = step(index);
      // Awaiting only real promises keeps a microtask hop out of the synchronous compiler's time.
      if (result instanceof Promise) await result;
      const elapsed = performance.now() - started;
      passTotal += elapsed;
      if (pass > 0) times.warmPerSchema[index]?.push(elapsed);
    }
    times.passTotals.push(passTotal);
  }
  return times;
}

/** The slowest schema by its median warm time: a garbage-collection pause inside one pass does not pick it. */
function summarise(schemas: readonly NamedSchema[], times: PassTimes): StepTiming {
  const medians = times.warmPerSchema.map(median);
  const slowestIndex = medians.reduce((best, value, index) => (value > (medians[best] ?? 0) ? index : best), 0);
  return {
    coldTotalMilliseconds: times.passTotals[0] ?? Number.NaN,
    warmTotalMilliseconds: medians.reduce((total, value) => total + value, 0),
    slowestSchema: schemas[slowestIndex]?.name ?? '',
    slowestMilliseconds: medians[slowestIndex] ?? Number.NaN,
  };
}

export async function timeGrammarCompile(llama: Llama, schemas: readonly NamedSchema[]): Promise<GrammarCompileTiming> {
  // Compiled first, so that its first pass is the compiler's first use in this process (cold).
  const compile = await timePasses(schemas.length, COMPILE_PASSES, (index) =>
    jsonSchemaToGbnf(schemas[index]?.schema ?? {}),
  );
  const texts = schemas.map((entry) => jsonSchemaToGbnf(entry.schema));
  const parse = await timePasses(schemas.length, PARSE_PASSES, (index) =>
    llama.createGrammar({ grammar: texts[index] ?? '' }),
  );
  return {
    schemaCount: schemas.length,
    ruleCount: texts.reduce((total, text) => total + text.trim().split('\n').length, 0),
    gbnfBytes: texts.reduce((total, text) => total + Buffer.byteLength(text), 0),
    compile: summarise(schemas, compile),
    parse: summarise(schemas, parse),
  };
}
