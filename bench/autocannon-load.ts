/**
 * autocannon, typed to the part the benchmarks use (the package ships no types), with the one
 * check every benchmark needs: a run that counted failures measured how fast errors are made,
 * not the request path, so it throws instead of returning numbers.
 */
import { createRequire } from 'node:module';

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Seconds of load; or `amount`, a fixed number of requests. */
  duration?: number;
  amount?: number;
}

export interface LoadResult {
  /** Seconds the run took. */
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  /** Whole milliseconds (autocannon's histogram). */
  latency: { p50: number; p99: number };
  requests: { total: number };
}

type Autocannon = (
  options: LoadSpec & { method: 'POST' },
  done: (error: Error | null, result: LoadResult) => void,
) => unknown;
// createRequire rather than `import`, because an untyped import would be an implicit any.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** POSTs `spec` under load; `label` names the server and phase in the error of a failed run. */
export async function postUnderLoad(spec: LoadSpec, label: string): Promise<LoadResult> {
  const result = await new Promise<LoadResult>((resolve, reject) => {
    autocannon({ ...spec, method: 'POST' }, (error, outcome) => (error ? reject(error) : resolve(outcome)));
  });
  const allAnswered = spec.amount === undefined ? result['2xx'] > 0 : result['2xx'] === spec.amount;
  if (result.non2xx === 0 && result.errors === 0 && result.timeouts === 0 && allAnswered) return result;
  throw new Error(
    `${label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts out of ${result.requests.total} — the numbers would be meaningless`,
  );
}

/** Completed requests over elapsed time, rather than autocannon's mean of per-second samples. */
export function requestsPerSecond(result: LoadResult): number {
  return result.requests.total / result.duration;
}
