/**
 * The default of listen.maxConnections, from the process's open file limit: every connection is
 * a file descriptor, and so is each of the service's own files, pipes and outgoing connections
 * (an engine's or upstream's pool, a sandbox's pipes, a model file, the log). 256 are kept for
 * those; the rest may be connections, up to 4096 (each costs memory too, and one replica behind
 * a load balancer rarely needs more). Node raises its soft limit to the hard one at start, so
 * the hard limit is the one that counts: systemd's LimitNOFILE, docker's --ulimit nofile.
 */
import { readFileSync } from 'node:fs';

const OWN_FILES = 256;
const MOST_CONNECTIONS = 4096;
/** Where the limit cannot be read (not Linux): the usual soft limit. */
const ASSUMED_FILE_LIMIT = 1024;

export function defaultMaxConnections(fileLimit = openFileLimit()): number {
  return Math.max(1, Math.min(MOST_CONNECTIONS, (fileLimit ?? ASSUMED_FILE_LIMIT) - OWN_FILES));
}

/** The process's soft open file limit (Linux), or undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((candidate) => candidate.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === 'unlimited') return Number.POSITIVE_INFINITY;
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}
