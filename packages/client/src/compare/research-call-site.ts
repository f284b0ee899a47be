/**
 * A research call site in the tier move check (spec, Versioning: "each call site is run on real
 * inputs and answers are compared"; issue 32). Both passes run on the model under comparison,
 * current and candidate alike: pass 1 gathers prose with server tools, pass 2 shapes it. Pass 2's
 * shaped answer is compared as a structured call's answer is (compare-models.ts); pass 1's prose
 * is not compared word for word, since two runs of one model never write the same prose. What
 * can be compared honestly: whether pass 1 gave prose or how it ended instead (`Insufficient
 * data`, a failure), the sources it found, its citations that name one of them and those that
 * name none (invented), and whether both models cited the same sources.
 */
import type { Client, ModelRef, ResearchOptions } from '../client.js';
import type { CallResult, FailureKind, ResearchNotes } from '../results.js';

export interface RecordedQuestion {
  question: string;
  /** Structured context, as the call site passes it. */
  context?: unknown;
  /** A known answer for pass 2's shaped answer: the fields given must match (see matchesKnownAnswer). */
  expected?: unknown;
}

/** The research call as the call site makes it; `model` and `shapeModel` are the compared model. */
type ResearchSettings = Pick<
  ResearchOptions<unknown>,
  | 'schema'
  | 'instructions'
  | 'shapeInstructions'
  | 'maxTokens'
  | 'shapeMaxTokens'
  | 'webSearchMaxUses'
  | 'webFetch'
  | 'maxContinuations'
  | 'toolName'
>;

export interface ResearchCallSite extends ResearchSettings {
  kind: 'research';
  name: string;
  inputs: RecordedQuestion[];
}

/** What pass 1 of one run came to: prose, or the kind of failure it ended in. */
export type PassOneOutcome = { notes: ResearchNotes } | { failure: FailureKind };

export interface ProseStats {
  /** Runs whose pass 1 ended with prose (and went on to pass 2). */
  prose: number;
  /** How the other runs' pass 1 ended, by failure kind (`insufficient_data` among them). */
  failures: Partial<Record<FailureKind, number>>;
  /** Over the runs with prose: sources found, citations that name one, `[n]` that name none. */
  sources: number;
  citations: number;
  unresolvedCitations: number;
}

export interface ProseComparison {
  current: ProseStats;
  candidate: ProseStats;
  /** Pairs (same input, same run number) where both gave prose, and how many cited the same sources (by URL). */
  compared: number;
  sameSources: number;
}

export interface ResearchRun {
  /** Pass 2's shaped answer (the call's value's `data`), or the call's failure, whichever pass it ended in. */
  answer: CallResult<unknown>;
  passOne: PassOneOutcome;
}

export async function runResearchSite(
  client: Client,
  site: ResearchCallSite,
  recorded: RecordedQuestion,
  model: ModelRef,
  timeoutMs: number | undefined,
): Promise<ResearchRun> {
  const { kind: _kind, name: _name, inputs: _inputs, ...settings } = site;
  const result = await client.research({
    ...settings,
    question: recorded.question,
    context: recorded.context,
    model,
    shapeModel: model,
    timeoutMs,
  });
  if (result.ok) return { answer: { ...result, value: result.value.data }, passOne: { notes: result.value } };
  // A failure that ended in pass 2 had pass 1's prose; one that ended in pass 1 is pass 1's outcome.
  const passOne = result.researchPass === 2 && result.research ? { notes: result.research } : { failure: result.kind };
  return { answer: result, passOne };
}

export function emptyProseComparison(): ProseComparison {
  const empty = (): ProseStats => ({ prose: 0, failures: {}, sources: 0, citations: 0, unresolvedCitations: 0 });
  return { current: empty(), candidate: empty(), compared: 0, sameSources: 0 };
}

export function tallyProse(comparison: ProseComparison, mine: PassOneOutcome, theirs: PassOneOutcome): void {
  tallyPassOne(comparison.current, mine);
  tallyPassOne(comparison.candidate, theirs);
  if (!('notes' in mine) || !('notes' in theirs)) return;
  comparison.compared += 1;
  if (citedSources(mine.notes) === citedSources(theirs.notes)) comparison.sameSources += 1;
}

function tallyPassOne(stats: ProseStats, outcome: PassOneOutcome): void {
  if (!('notes' in outcome)) {
    stats.failures[outcome.failure] = (stats.failures[outcome.failure] ?? 0) + 1;
    return;
  }
  stats.prose += 1;
  stats.sources += outcome.notes.sources.length;
  stats.citations += outcome.notes.citations.filter((citation) => citation.source).length;
  stats.unresolvedCitations += outcome.notes.unresolvedCitations.length;
}

/** The URLs the prose cites, sorted and deduplicated, as one comparable string. */
function citedSources(notes: ResearchNotes): string {
  const urls = notes.citations.flatMap((citation) => (citation.source ? [citation.source.url] : []));
  return JSON.stringify([...new Set(urls)].sort());
}
