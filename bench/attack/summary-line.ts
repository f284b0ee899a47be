/**
 * Each attack script's figures for run-all.ts, besides its own table: one line per script,
 * `attack-summary {...}`, printed last, that the runner finds in the script's output. A row is
 * one case: whether the service crashed, its 5xx replies, its worst /health stall and event-loop
 * delay, its peak RSS.
 */

export interface SummaryRow {
  case: string;
  /** 1 when the service exited during the case (later cases of the same service count it again). */
  crashes: number;
  /**
   * Replies with a 5xx status other than 503 and 529: those two are load shedding, the answer
   * the service is meant to give when it is full (slow-readers.ts counts its 529s on purpose).
   */
  serverErrors: number;
  /** Longest time between two /health replies, in ms. */
  worstStallMs: number;
  /** The service's own worst event-loop delay during the case (loop-delay-meter.ts), in ms. */
  worstLoopDelayMs: number;
  /** The service's peak resident memory (VmHWM) in MB; null where /proc has none. */
  peakRssMb: number | null;
  /** Anything else the script counts as a finding (the fuzz: replies not in the error envelope). */
  otherFindings?: number;
}

const MARK = 'attack-summary ';

export function printSummaryLine(script: string, rows: readonly SummaryRow[]): void {
  console.log(`\n${MARK}${JSON.stringify({ script, rows })}`);
}

/** The rows of every summary line in a script's output. */
export function summaryRowsIn(output: string): SummaryRow[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith(MARK))
    .flatMap((line) => (JSON.parse(line.slice(MARK.length)) as { rows: SummaryRow[] }).rows);
}

/** A 5xx that counts as a server error in a summary row: not load shedding (503, 529). */
export function isServerError(status: number): boolean {
  return status >= 500 && status !== 503 && status !== 529;
}
