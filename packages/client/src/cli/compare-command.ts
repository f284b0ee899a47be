/**
 * `mms compare FILE`: the tier move check as a table. FILE is JSON:
 * `{"current": ModelRef, "candidate": ModelRef, "runs"?: n, "timeoutMs"?: n, "models"?: {small, mid,
 *   large}, "thinkingDisabledModels"?: [...], "callSites": [...]}`, each call site structured,
 *   `{"kind"?: "structured", name, instructions, schema, inputs: [{input?, context?, expected?}],
 *   maxTokens?, toolName?, insufficientData?}`, or research (issue 32), `{"kind": "research", name,
 *   schema, inputs: [{question, context?, expected?}], instructions?, shapeInstructions?,
 *   maxTokens?, shapeMaxTokens?, webSearchMaxUses?, webFetch?, maxContinuations?, toolName?}`
 *   (packages/client/README.md, Tier move check). `mms compare` reaches it through the service's
 *   bin, which resolves this module at run time (the service does not depend on the client).
 * The service comes from --base-url / MMS_BASE_URL and the key from --api-key / MMS_API_KEY.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client } from '../client.js';
import type { ModelSpec } from '../client-options.js';
import { compareModels, type CompareSettings } from '../compare/compare-models.js';
import { formatComparisonTable } from '../compare/comparison-table.js';

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
}

const USAGE = 'usage: mms compare FILE [--base-url URL] [--api-key KEY] [--runs N] [--timeout-ms N]\n';

interface CompareFile extends CompareSettings {
  models?: Record<'small' | 'mid' | 'large', string | ModelSpec>;
  thinkingDisabledModels?: string[];
}

/** Returns the exit status: 0 with the table printed, 2 for a usage or file error. */
export async function runCompareCommand(
  argv: string[],
  io: CommandIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'base-url': { type: 'string' },
        'api-key': { type: 'string' },
        runs: { type: 'string' },
        'timeout-ms': { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const baseURL = values['base-url'] ?? io.env.MMS_BASE_URL;
  const apiKey = values['api-key'] ?? io.env.MMS_API_KEY;
  const problem =
    positionals.length !== 1
      ? 'give exactly one call-site FILE'
      : !baseURL
        ? 'no service: pass --base-url or set MMS_BASE_URL'
        : !apiKey
          ? 'no key: pass --api-key or set MMS_API_KEY'
          : undefined;
  if (problem) {
    io.stderr.write(`mms compare: ${problem}\n${USAGE}`);
    return 2;
  }
  let file: CompareFile;
  try {
    file = readCompareFile(positionals[0]!);
  } catch (error) {
    io.stderr.write(`mms compare: ${(error as Error).message}\n`);
    return 2;
  }
  const runs = values.runs === undefined ? file.runs : Number(values.runs);
  const timeoutMs = values['timeout-ms'] === undefined ? file.timeoutMs : Number(values['timeout-ms']);
  for (const [name, value] of [
    ['--runs', runs],
    ['--timeout-ms', timeoutMs],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      io.stderr.write(`mms compare: ${name} must be a positive integer\n${USAGE}`);
      return 2;
    }
  }
  let report;
  try {
    const client = new Client({
      baseURL: baseURL!,
      apiKey: apiKey!,
      models: file.models ?? { small: 'small', mid: 'mid', large: 'large' },
      ...(file.thinkingDisabledModels ? { thinkingDisabledModels: file.thinkingDisabledModels } : {}),
    });
    report = await compareModels(client, { ...file, runs, timeoutMs });
  } catch (error) {
    // A bad model or schema in the file (ClientConfigError, PreSendError): nothing was compared.
    io.stderr.write(`mms compare: ${(error as Error).message}\n`);
    return 2;
  }
  io.stdout.write(`${formatComparisonTable(report)}\n`);
  return 0;
}

function readCompareFile(path: string): CompareFile {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
  const file = json as Partial<CompareFile>;
  if (file === null || typeof file !== 'object') throw new Error(`${path}: must be a JSON object`);
  if (file.current === undefined || file.candidate === undefined)
    throw new Error(`${path}: "current" and "candidate" are required (a tier, a model id, or {id, tier, ...})`);
  if (!Array.isArray(file.callSites) || file.callSites.length === 0)
    throw new Error(`${path}: "callSites" must be a non-empty array`);
  file.callSites.forEach((site: unknown, index) => {
    const problem = callSiteProblem(site);
    if (problem) throw new Error(`${path}: callSites.${index} ${problem}`);
  });
  return file as CompareFile;
}

/** What a call site of the file lacks, by its kind; undefined when it has what its runs need. */
function callSiteProblem(site: unknown): string | undefined {
  if (site === null || typeof site !== 'object') return 'must be an object';
  const fields = site as Record<string, unknown>;
  const named = typeof fields.name === 'string' && typeof fields.schema === 'object' && Array.isArray(fields.inputs);
  if (fields.kind === 'research') {
    const asked = named && (fields.inputs as unknown[]).every((input) => typeof questionOf(input) === 'string');
    return asked ? undefined : '(research) needs name, schema and inputs, each with a question';
  }
  if (fields.kind !== undefined && fields.kind !== 'structured')
    return `kind: "structured" (the default) or "research", got ${JSON.stringify(fields.kind)}`;
  return named && typeof fields.instructions === 'string' ? undefined : 'needs name, instructions, schema and inputs';
}

function questionOf(input: unknown): unknown {
  return input !== null && typeof input === 'object' ? (input as Record<string, unknown>).question : undefined;
}
