/**
 * The warm pool starts one sandbox per turn of the event loop: each start holds the loop while
 * the kernel copies the service's page tables, and four at once held it 300 ms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SandboxProcess } from '../src/tools/code-execution/sandbox-process.js';
import { WarmPool } from '../src/tools/code-execution/warm-pool.js';

function fakeSandbox(): SandboxProcess {
  return {
    isReady: true,
    ready: Promise.resolve(),
    whenGone: new Promise<void>(() => {}),
    dispose: async () => {},
  } as unknown as SandboxProcess;
}

test('fill starts one sandbox per turn of the event loop until the pool is full', async () => {
  const started: number[] = [];
  let turn = 0;
  const pool = new WarmPool(3, () => {
    started.push(turn);
    return fakeSandbox();
  });
  pool.fill();
  pool.fill();
  assert.equal(started.length, 1, 'a second fill in the same turn starts nothing more');
  for (turn = 1; turn <= 4; turn += 1) await nextTurn();
  assert.deepEqual(started, [0, 1, 2]);
  await pool.close();
});

test('taking a warm sandbox starts its replacement', async () => {
  let starts = 0;
  const pool = new WarmPool(2, () => {
    starts += 1;
    return fakeSandbox();
  });
  pool.fill();
  for (let turn = 0; turn < 3; turn += 1) await nextTurn();
  assert.equal(starts, 2);
  assert.equal(pool.take().warm, true);
  assert.equal(starts, 3);
  await pool.close();
});
