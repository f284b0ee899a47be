/**
 * The tier move check's report as a fixed-width table, one row per call site; under a research
 * call site's row, a line on pass 1 (research-call-site.ts says what of it is compared).
 */
import type { ComparisonReport } from './compare-models.js';
import type { ProseComparison } from './research-call-site.js';

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
  const rows = report.callSites.map((site) => [
    site.name,
    fraction(site.current.valid, site.current.runs),
    fraction(site.candidate.valid, site.candidate.runs),
    fraction(site.agreed, site.compared),
    fraction(site.current.knownHits, site.current.knownRuns),
    fraction(site.candidate.knownHits, site.candidate.knownRuns),
    counts(site.candidate.failures),
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
    ...rows.flatMap((row, index) => {
      const site = report.callSites[index]!;
      return site.prose ? [line(row), proseLine(site.prose, site.current.runs)] : [line(row)];
    }),
  ].join('\n');
}

/** Pass 1 of a research call site, current vs candidate. */
function proseLine(prose: ProseComparison, runs: number): string {
  const { current, candidate } = prose;
  return [
    `  pass 1 (current vs candidate): prose ${current.prose}/${runs} vs ${candidate.prose}/${runs}`,
    `sources ${current.sources} vs ${candidate.sources}`,
    `citations ${current.citations} vs ${candidate.citations}`,
    `naming no source ${current.unresolvedCitations} vs ${candidate.unresolvedCitations}`,
    `same sources cited ${fraction(prose.sameSources, prose.compared)}`,
    `candidate's other endings ${counts(candidate.failures)}`,
  ].join('; ');
}

function fraction(part: number, whole: number): string {
  return whole === 0 ? '-' : `${part}/${whole}`;
}

/** `invalid 2, timeout 1`, or `-` for none. */
function counts(byKind: Partial<Record<string, number>>): string {
  return (
    Object.entries(byKind)
      .map(([kind, count]) => `${kind} ${count}`)
      .join(', ') || '-'
  );
}
