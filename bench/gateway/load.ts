/**
 * The two kinds of load bench/gateway.ts puts on each arm:
 * - `runLoad`: autocannon at a fixed number of connections, for throughput (and p50/p99 under
 *   that load, which autocannon records in whole milliseconds);
 * - `LatencyProbe`: one keep-alive connection, one request at a time, timed with
 *   `performance.now()` from sending to the last byte of the body, for latency with
 *   microsecond resolution on an otherwise idle path: what a gateway adds to one request.
 *   The bench runs the arms' probes in short slices, taking turns, so that every arm's samples
 *   come from the same stretch of time (this VM's speed drifts by half within seconds).
 */
import { Agent, request } from 'node:http';
import { postUnderLoad, requestsPerSecond } from '../autocannon-load.js';
import { percentile } from '../statistics.js';

export interface HttpTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface Throughput {
  requestsPerSecond: number;
  /** Under the load, whole milliseconds (autocannon's histogram). */
  p50: number;
  p99: number;
}

export async function runLoad(
  target: HttpTarget,
  connections: number,
  durationSeconds: number,
  phase: string,
): Promise<Throughput> {
  const result = await postUnderLoad(
    { url: target.url, headers: target.headers, body: target.body, connections, duration: durationSeconds },
    `${target.name} ${phase}`,
  );
  return { requestsPerSecond: requestsPerSecond(result), p50: result.latency.p50, p99: result.latency.p99 };
}

// --- sequential latency probe ------------------------------------------------------------

export interface Latency {
  /** Milliseconds, fractional. */
  p50: number;
  p99: number;
  samples: number;
}

function once(target: HttpTarget, agent: Agent, url: URL, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const outgoing = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...target.headers, 'content-length': body.length },
      },
      (response) => {
        let tail = '';
        response.on('data', (chunk: Buffer) => {
          if (response.statusCode !== 200) tail = (tail + chunk.toString('utf8')).slice(-500);
        });
        response.on('end', () => {
          if (response.statusCode !== 200)
            reject(new Error(`${target.name}: latency probe got ${String(response.statusCode)}: ${tail}`));
          else resolve(performance.now() - started);
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** One keep-alive connection to one arm, kept open between slices. */
export class LatencyProbe {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  private readonly url: URL;
  private readonly body: Buffer;
  private readonly samples: number[] = [];

  constructor(private readonly target: HttpTarget) {
    this.url = new URL(target.url);
    this.body = Buffer.from(target.body);
  }

  /** Requests one at a time for `seconds`, each one's time kept in `samples`; answers how many. */
  async run(seconds: number): Promise<number> {
    const deadline = performance.now() + seconds * 1000;
    let requests = 0;
    for (; performance.now() < deadline; requests += 1)
      this.samples.push(await once(this.target, this.agent, this.url, this.body));
    return requests;
  }

  /** One request, timed, not kept in `samples` (bench/gateway-cpu.ts keeps its own). */
  once(): Promise<number> {
    return once(this.target, this.agent, this.url, this.body);
  }

  /** The percentiles of every sample so far. */
  latency(): Latency {
    const sorted = [...this.samples].sort((left, right) => left - right);
    return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), samples: sorted.length };
  }

  close(): void {
    this.agent.destroy();
  }
}
