/**
 * The default of listen.maxBodyMemoryInFlight (issue 31, http/body-memory-budget.ts), from the
 * memory the process may use: a sixteenth of it, at least what four of the largest bodies take
 * (256 MB) and at most 1 GB.
 *
 * - A sixteenth: the rest of the memory has other owners (the V8 heap, an embedded model's
 *   weights, code execution sandboxes of 512 MB each, and the fixed half gigabyte past the
 *   budget that reading and parsing take: docs/reliability.md, "Request bodies in flight"). A
 *   16 GB host gets 1 GB, a 2 GB container the floor.
 * - At least four 32 MB bodies, so that on the smallest host the largest body still fits beside
 *   a few others.
 * - At most 1 GB: 16 of the largest bodies at once, or five hundred 1 MB conversations, is more
 *   than one replica reads at once; past that, more memory only lets an attacker hold more.
 */
import { totalmem } from 'node:os';
import { MAX_REQUEST_BYTES } from '@model-messages/protocol';
import { MEMORY_PER_BODY_BYTE } from './body-memory-budget.js';

const MEMORY_SHARE = 1 / 16;
const LEAST_BODIES = 4;
const MOST_BYTES = 1024 * 1024 * 1024;

export function defaultMaxBodyMemoryInFlight(memory = machineMemory()): number {
  const least = LEAST_BODIES * MAX_REQUEST_BYTES * MEMORY_PER_BODY_BYTE;
  return Math.round(Math.min(MOST_BYTES, Math.max(least, memory * MEMORY_SHARE)));
}

/**
 * The memory the process may use: the machine's, or its cgroup's limit where that is lower (a
 * container sees the host's total in os.totalmem(); a cgroup with no limit reports a huge one).
 */
export function machineMemory(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return constrained > 0 && constrained < total ? constrained : total;
}
