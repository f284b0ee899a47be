/**
 * The attacks' results: each legitimate request's outcome (a status, or why it got none) at the
 * time it was sent, counted per time window, printed as a markdown table for docs/reliability.md.
 */
import type { ServiceChild } from './service-child.js';
import { isServerError, type SummaryRow } from './summary-line.js';

export interface Outcome {
  /** Milliseconds since the attack began. */
  atMs: number;
  /** `200`, `529`, ... or the failure without a reply (`timeout`, `ECONNRESET`). */
  outcome: string;
}

export function printOutcomeTable(title: string, outcomes: readonly Outcome[], windowMs: number): void {
  const kinds = [...new Set(outcomes.map((entry) => entry.outcome))].sort();
  const windows = new Map<number, Map<string, number>>();
  for (const { atMs, outcome } of outcomes) {
    const start = Math.floor(atMs / windowMs) * windowMs;
    const counts = windows.get(start) ?? new Map<string, number>();
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    windows.set(start, counts);
  }
  console.log(`\n${title}\n`);
  console.log(`| seconds | ${kinds.join(' | ')} |`);
  console.log(`|---|${kinds.map(() => '---:').join('|')}|`);
  for (const [start, counts] of [...windows].sort(([a], [b]) => a - b))
    console.log(
      `| ${(start / 1000).toFixed(0)}-${((start + windowMs) / 1000).toFixed(0)} | ${kinds.map((kind) => counts.get(kind) ?? 0).join(' | ')} |`,
    );
  const total = new Map<string, number>();
  for (const { outcome } of outcomes) total.set(outcome, (total.get(outcome) ?? 0) + 1);
  console.log(`| all | ${kinds.map((kind) => total.get(kind) ?? 0).join(' | ')} |`);
}

/** What a request that got no reply failed with: a system code, or its own time limit. */
export function failureOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if ((error as Error).name === 'TimeoutError') return 'timeout';
  if (typeof cause?.code === 'string') return cause.code;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : (error as Error).name;
}

/**
 * The summary row (summary-line.ts) of an attack whose legitimate requests are `outcomes`,
 * against `service`, since `attackStartedAt` (Date.now() time).
 */
export function legitimateTrafficRow(
  name: string,
  service: ServiceChild,
  outcomes: readonly Outcome[],
  worstGapMs: number,
  attackStartedAt: number,
): SummaryRow {
  const serverErrors = outcomes.filter((entry) => isServerError(Number(entry.outcome))).length;
  return serviceRow(name, service, serverErrors, worstGapMs, attackStartedAt);
}

/** A summary row of what `service` went through since `startedAt` (Date.now() time). */
function serviceRow(
  name: string,
  service: ServiceChild,
  serverErrors: number,
  worstGapMs: number,
  startedAt: number,
): SummaryRow {
  return {
    case: name,
    crashes: service.crashed() === undefined ? 0 : 1,
    serverErrors,
    worstStallMs: worstGapMs,
    worstLoopDelayMs: service.worstLoopDelay(startedAt).delayMs,
    peakRssMb: service.peakRssMb() ?? null,
  };
}

/** Replies counted by status (`200`, `429`) or by why there was none (`ECONNRESET`). */
export type StatusCounts = Map<string, number>;

/** `10 x 200, 1490 x 429` */
export function statusCountText(statuses: StatusCounts): string {
  return [...statuses].map(([status, count]) => `${count} x ${status}`).join(', ');
}

/**
 * The summary row of a case whose replies were counted by status, with the case's own findings
 * (limit-bursts.ts, schema-flood.ts); a crash of the service is one more.
 */
export function statusCountRow(
  name: string,
  service: ServiceChild,
  statuses: StatusCounts,
  worstGapMs: number,
  startedAt: number,
  findings: string[],
): SummaryRow {
  const crashed = service.crashed();
  if (crashed !== undefined) findings.push(`the service ended: ${crashed}`);
  let serverErrors = 0;
  for (const [status, count] of statuses) if (isServerError(Number(status))) serverErrors += count;
  return { ...serviceRow(name, service, serverErrors, worstGapMs, startedAt), otherFindings: findings.length };
}
