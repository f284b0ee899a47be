/**
 * Bench only, never part of the service: a module that bench/attack/service-child.ts preloads
 * (`node --import`) into `mms serve` when an attack asks for `loopBlockMs`. On SIGUSR2 it holds
 * the service's event loop busy for MMS_ATTACK_LOOP_BLOCK_MS, a stand-in for any request that
 * keeps the loop busy, so that an attack can show what else waits meanwhile (sandbox-flood.ts:
 * a sandbox's memory growing while the loop that watched it is stuck). A signal carries no
 * value, so the time is fixed when the service starts.
 */
import { isMainThread } from 'node:worker_threads';

const blockMs = Number(process.env.MMS_ATTACK_LOOP_BLOCK_MS);
if (!Number.isFinite(blockMs) || blockMs <= 0)
  throw new Error('bench/attack/loop-blocker.ts needs MMS_ATTACK_LOOP_BLOCK_MS, a positive number of milliseconds');

// Threads inherit neither signals nor a loop worth blocking: only the main thread listens.
if (isMainThread)
  process.on('SIGUSR2', () => {
    const until = performance.now() + blockMs;
    while (performance.now() < until) {
      // deliberately busy: nothing else on this loop runs meanwhile
    }
  });
