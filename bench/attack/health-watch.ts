/**
 * The `/health` prober (health-prober.ts) every attack runs beside itself: forked, so that the
 * attacker's own work never delays a probe, and started once the service answers. stop() gives
 * the longest time between two replies (about 11 ms when nothing stalls) and the failed probes.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';

export interface HealthFigures {
  worstGapMs: number;
  /** When the worst gap ended, in Date.now() time. */
  worstGapEndedAt: number;
  failedProbes: number;
}

export interface HealthWatch {
  stop(): Promise<HealthFigures>;
}

export async function startHealthWatch(baseURL: string): Promise<HealthWatch> {
  const prober = fork(new URL('./health-prober.ts', import.meta.url), [`${baseURL}/health`], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(prober, 'exit').then(([code]) => {
    throw new Error(`the /health prober exited with code ${String(code)} before it answered`);
  });
  exited.catch(() => undefined);
  await Promise.race([once(prober, 'message'), exited]);
  return {
    stop: async () => {
      const figures = Promise.race([once(prober, 'message'), exited]);
      prober.send('stop');
      const [{ worstGap, worstGapEndedAt, failures }] = (await figures) as [
        { worstGap: number; worstGapEndedAt: number; failures: number },
      ];
      return { worstGapMs: worstGap, worstGapEndedAt, failedProbes: failures };
    },
  };
}
