/**
 * The tier move check (spec, Versioning: "Before moving a tier, each call site is run on real
 * inputs and answers are compared"). Recorded call-site inputs run on the current and the
 * candidate model several times; per call site the report gives schema validity on each,
 * agreement between the two, and hits on known answers. Every call site: structured calls, and
 * research calls with both passes on each model (research-call-site.ts says what of pass 1 is
 * compared; issue 32). Runs go one at a time, so that the check never competes with production
 * traffic for more than one slot.
 */
import type { Client, ModelRef } from '../client.js';
import type { CallResult, FailureKind } from '../results.js';
import type { JsonSchema } from '../strict-schema.js';
import { canonicalJson, matchesKnownAnswer } from './known-answer.js';
import {
  emptyProseComparison,
  runResearchSite,
  tallyProse,
  type PassOneOutcome,
  type ProseComparison,
  type ResearchCallSite,
} from './research-call-site.js';

export interface RecordedInput {
  context?: unknown;
  input?: string;
  /** A known answer: the fields given must match (see matchesKnownAnswer). */
  expected?: unknown;
}

export interface StructuredCallSite {
  /** Default `structured`. */
  kind?: 'structured';
  name: string;
  instructions: string;
  schema: JsonSchema;
  toolName?: string;
  maxTokens?: number;
  /** As in structured calls: default false, the schema as given; true adds the `Insufficient data` envelope. Set it as the call site does. */
  insufficientData?: boolean;
  inputs: RecordedInput[];
}

export type CallSite = StructuredCallSite | ResearchCallSite;

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
  /** Runs whose answer passed the schema (a research call's: pass 2's shaped answer). */
  valid: number;
  runs: number;
  /** Runs on inputs with a known answer, and how many of them matched it. */
  knownRuns: number;
  knownHits: number;
  /** Failures by kind; a research call's from either pass. */
  failures: Partial<Record<FailureKind, number>>;
}

export interface CallSiteReport {
  name: string;
  current: ModelStats;
  candidate: ModelStats;
  /** Pairs (same input, same run number) where both answered validly, and how many were equal. */
  compared: number;
  agreed: number;
  /** Research call sites only: what pass 1 came to on each model. */
  prose?: ProseComparison;
}

export interface ComparisonReport {
  current: string;
  candidate: string;
  runs: number;
  callSites: CallSiteReport[];
}

/** One run of a call site on one model: the answer compared, and for research, pass 1's outcome. */
interface SiteRun {
  answer: CallResult<unknown>;
  passOne?: PassOneOutcome;
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
      ...(site.kind === 'research' ? { prose: emptyProseComparison() } : {}),
    };
    const runOn = siteRunner(client, site, settings.timeoutMs);
    for (const [index, recorded] of site.inputs.entries()) {
      for (let run = 0; run < runs; run += 1) {
        const mine = await runOn(index, settings.current);
        const theirs = await runOn(index, settings.candidate);
        tally(report.current, mine.answer, recorded.expected);
        tally(report.candidate, theirs.answer, recorded.expected);
        if (mine.answer.ok && theirs.answer.ok) {
          report.compared += 1;
          if (canonicalJson(mine.answer.value) === canonicalJson(theirs.answer.value)) report.agreed += 1;
        }
        if (report.prose && mine.passOne && theirs.passOne) tallyProse(report.prose, mine.passOne, theirs.passOne);
      }
    }
    callSites.push(report);
  }
  return { current, candidate, runs, callSites };
}

/** Runs the call site's input `index` on a model. */
function siteRunner(
  client: Client,
  site: CallSite,
  timeoutMs: number | undefined,
): (index: number, model: ModelRef) => Promise<SiteRun> {
  if (site.kind === 'research')
    return (index, model) => runResearchSite(client, site, site.inputs[index]!, model, timeoutMs);
  return async (index, model) => {
    const recorded = site.inputs[index]!;
    const answer = await client.structured({
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
    return { answer };
  };
}

function emptyStats(model: string): ModelStats {
  return { model, valid: 0, runs: 0, knownRuns: 0, knownHits: 0, failures: {} };
}

function tally(stats: ModelStats, result: CallResult<unknown>, expected: unknown): void {
  stats.runs += 1;
  if (result.ok) stats.valid += 1;
  else stats.failures[result.kind] = (stats.failures[result.kind] ?? 0) + 1;
  if (expected === undefined) return;
  stats.knownRuns += 1;
  if (result.ok && matchesKnownAnswer(result.value, expected)) stats.knownHits += 1;
}
