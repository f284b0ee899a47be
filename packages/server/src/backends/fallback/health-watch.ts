/**
 * A list's active health checks (issue 36): every `probeIntervalMs` each member is asked whether
 * it would answer (its `Backend.readiness`: an engine's GET /models, an upstream's model, within
 * readiness-probe.ts's time limit and cache), so that a replica that died is known before a
 * request pays for finding out, and one that came back is used again before its circuit's
 * cool-down runs out. GET /ready asks the same and its answers count too.
 *
 * Only while the watch runs (`mms serve` starts it with the list's `prepare`): a verdict that
 * nothing would ever revise must not keep a member down, so a list whose watch does not run
 * (probeIntervalMs 0, or a program that never prepared it) goes by its circuits alone.
 */
import type { BackendReport } from '../backend-events.js';
import type { BackendReadiness } from '../backend.js';
import type { ListMember } from './list-member.js';

export class HealthWatch {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly members: readonly ListMember[],
    private readonly intervalMs: number,
    private readonly report: BackendReport,
  ) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.intervalMs === 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => void this.probe(), this.intervalMs);
    // A probe is no reason for the process to stay.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Every member's answer, in list order; while the watch runs, each is its member's health. */
  async probe(): Promise<BackendReadiness[][]> {
    const answers = await Promise.all(this.members.map((member) => member.backend.readiness()));
    if (this.running) answers.forEach((answer, index) => this.record(this.members[index]!, answer));
    return answers;
  }

  private record(member: ListMember, answer: readonly BackendReadiness[]): void {
    const up = answer.some((entry) => entry.ready);
    const before = member.probedUp;
    if (up === before) return;
    member.probedUp = up;
    if (up) member.breaker.endCooldown();
    // A first verdict of up changes nothing a request would see: no event.
    if (before !== undefined || !up) this.report({ type: 'health', backend: member.label, up });
  }
}
