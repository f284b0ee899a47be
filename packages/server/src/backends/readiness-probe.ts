/**
 * GET /ready's look at the server behind a backend (an OpenAI-compatible engine, another
 * Messages service). Load balancers and orchestrators ask every few seconds, each of them: the
 * probe's answer stands for PROBE_CACHE_MS, and calls while a probe runs share it, so that the
 * engine sees at most one probe per backend in that time however often /ready is asked. The
 * probe gives up after PROBE_TIMEOUT_MS, so that /ready answers within it.
 */
import type { BackendReadiness } from './backend.js';

export const PROBE_TIMEOUT_MS = 2_000;
const PROBE_CACHE_MS = 5_000;

export class ReadinessProbe {
  private last: { startedAt: number; answer: Promise<BackendReadiness> } | undefined;

  /** `probe` never rejects: a failure is an answer that is not ready. */
  constructor(
    private readonly probe: () => Promise<BackendReadiness>,
    private readonly now: () => number = Date.now,
  ) {}

  answer(): Promise<BackendReadiness> {
    const now = this.now();
    if (this.last === undefined || now - this.last.startedAt >= PROBE_CACHE_MS)
      this.last = { startedAt: now, answer: this.probe() };
    return this.last.answer;
  }
}

/**
 * An upstream that answered the probe with `status`: ready unless it is failing (5xx) or
 * refuses this service's key (401, 403: waiting does not fix that). Any other answer, a 404 for
 * a server without the models endpoint included, says that it is up.
 */
export function answeredReadiness(backend: string, status: number): BackendReadiness {
  const ready = status < 500 && status !== 401 && status !== 403;
  return { backend, ready, state: ready ? 'reachable' : `answered ${status}` };
}

export function unreachable(backend: string): BackendReadiness {
  return { backend, ready: false, state: 'unreachable' };
}
