/**
 * Bench only, never part of the service: a module that bench/attack/service-child.ts preloads
 * (`node --import`) into every `mms serve` it starts. It measures the service's own event-loop
 * stalls: a timer due every TICK_MS that runs late ran late because the loop was busy. Each delay
 * over REPORTED_MS is appended to MMS_ATTACK_LOOP_DELAY_FILE as a JSON line (a LoopDelay), so
 * that an attack can take the worst of the time it ran, leaving out the service's start.
 *
 * The /health prober (health-prober.ts) sees stalls as a client does, and on a machine with
 * fewer cores than busy processes it also sees the prober itself waiting for a core. This meter
 * runs on the service's loop, so its figure leaves the prober out; the service waiting for a
 * core is in both.
 */
import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

export interface LoopDelay {
  delayMs: number;
  /** When the delay ended, in Date.now() time. */
  endedAt: number;
}

const file = process.env.MMS_ATTACK_LOOP_DELAY_FILE;
if (file === undefined) throw new Error('bench/attack/loop-delay-meter.ts needs MMS_ATTACK_LOOP_DELAY_FILE');

const TICK_MS = 5;
/** Shorter delays are a loaded machine's noise; writing each would be work on the loop measured. */
const REPORTED_MS = 20;

// Workers have loops of their own; the one that answers requests is the main thread's.
if (isMainThread) {
  let due = performance.now() + TICK_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - due;
    due = now + TICK_MS;
    if (late > REPORTED_MS)
      appendFileSync(file, `${JSON.stringify({ delayMs: late, endedAt: Date.now() } satisfies LoopDelay)}\n`);
  }, TICK_MS);
  timer.unref();
}
