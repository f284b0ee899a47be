/**
 * The tier move check (spec, Versioning: "Before moving a tier, each call site is run on real
 * inputs and answers are compared"). Recorded call-site inputs run on the current and the
 * candidate model several times; per call site the report gives schema validity on each,
 * agreement between the two, and hits on known answers. Runs go one at a time, so that the
 * check never competes with production traffic for more than one slot.
 */
import type { Client, ModelRef } from '../client.js';
import type { CallResult, FailureKind } from '../results.js';
import type { JsonSchema } from '../strict-schema.js';
import { canonicalJson, matchesKnownAnswer } from './known-answer.js';

export interface RecordedInput {
  context?: unknown;
  input?: string;
  /** A known answer: the fields given must match (see matchesKnownAnswer). */
  expected?: unknown;
}

export interface CallSite {
  name: string;
  instructions: string;
  schema: JsonSchema;
  toolName?: string;
  maxTokens?: number;
  /** As in structured calls: default false, the schema as given; true adds the `Insufficient data` envelope. Set it as the call site does. */
  insufficientData?: boolean;
  inputs: RecordedInput[];
}

export interface CompareSettings {
  current: ModelRef;
  candidate: ModelRef;
  /** Runs per input and model; default 5 (spec: "four of five runs"). */
  runs?: number;
  /** Per call; default the client's. */
  timeoutMs?: number;
  callSites: CallSite[];
}

export interface ModelStats {
  model: string;
  /** Runs whose answer passed the schema. */
  valid: number;
  runs: number;
  /** Runs on inputs with a known answer, and how many of them matched it. */
  knownRuns: number;
  knownHits: number;
  failures: Partial<Record<FailureKind, number>>;
}

export interface CallSiteReport {
  name: string;
  current: ModelStats;
  candidate: ModelStats;
  /** Pairs (same input, same run number) where both answered validly, and how many were equal. */
  compared: number;
  agreed: number;
}

export interface ComparisonReport {
  current: string;
  candidate: string;
  runs: number;
  callSites: CallSiteReport[];
}

export async function compareModels(client: Client, settings: CompareSettings): Promise<ComparisonReport> {
  const runs = settings.runs ?? 5;
  const current = client.model(settings.current).id;
  const candidate = client.model(settings.candidate).id;
  const callSites: CallSiteReport[] = [];
  for (const site of settings.callSites) {
    const report: CallSiteReport = {
      name: site.name,
      current: emptyStats(current),
      candidate: emptyStats(candidate),
      compared: 0,
      agreed: 0,
    };
    for (const recorded of site.inputs) {
      for (let run = 0; run < runs; run += 1) {
        const mine = await runOnce(client, site, recorded, settings.current, settings.timeoutMs);
        const theirs = await runOnce(client, site, recorded, settings.candidate, settings.timeoutMs);
        tally(report.current, mine, recorded);
        tally(report.candidate, theirs, recorded);
        if (mine.ok && theirs.ok) {
          report.compared += 1;
          if (canonicalJson(mine.value) === canonicalJson(theirs.value)) report.agreed += 1;
        }
      }
    }
    callSites.push(report);
  }
  return { current, candidate, runs, callSites };
}

function runOnce(
  client: Client,
  site: CallSite,
  recorded: RecordedInput,
  model: ModelRef,
  timeoutMs: number | undefined,
): Promise<CallResult<unknown>> {
  return client.structured({
    model,
    schema: site.schema,
    instructions: site.instructions,
    context: recorded.context,
    input: recorded.input,
    toolName: site.toolName,
    maxTokens: site.maxTokens,
    insufficientData: site.insufficientData,
    timeoutMs,
  });
}

function emptyStats(model: string): ModelStats {
  return { model, valid: 0, runs: 0, knownRuns: 0, knownHits: 0, failures: {} };
}

function tally(stats: ModelStats, result: CallResult<unknown>, recorded: RecordedInput): void {
  stats.runs += 1;
  if (result.ok) stats.valid += 1;
  else stats.failures[result.kind] = (stats.failures[result.kind] ?? 0) + 1;
  if (recorded.expected === undefined) return;
  stats.knownRuns += 1;
  if (result.ok && matchesKnownAnswer(result.value, recorded.expected)) stats.knownHits += 1;
}

/** The report as a fixed-width table, one row per call site. */
export function formatComparisonTable(report: ComparisonReport): string {
  const header = [
    'call site',
    `valid ${report.current}`,
    `valid ${report.candidate}`,
    'agreement',
    `known ${report.current}`,
    `known ${report.candidate}`,
    'failures (candidate)',
  ];
  const fraction = (part: number, whole: number) => (whole === 0 ? '-' : `${part}/${whole}`);
  const rows = report.callSites.map((site) => [
    site.name,
    fraction(site.current.valid, site.current.runs),
    fraction(site.candidate.valid, site.candidate.runs),
    fraction(site.agreed, site.compared),
    fraction(site.current.knownHits, site.current.knownRuns),
    fraction(site.candidate.knownHits, site.candidate.knownRuns),
    Object.entries(site.candidate.failures)
      .map(([kind, count]) => `${kind} ${count}`)
      .join(', ') || '-',
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [
    `${report.current} -> ${report.candidate}, ${report.runs} runs per input`,
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
  ].join('\n');
}
