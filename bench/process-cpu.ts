/**
 * The CPU time a server process and its children have spent, from /proc (Linux): each thread's
 * time on a core in nanoseconds (`/proc/<pid>/task/<tid>/schedstat`), summed over the process,
 * its worker and GC threads included, and over every process below it (a peer's launcher may run
 * the server in a child). Read before and after a stretch of requests, the difference per
 * request is what the server spent on each (issue 36: mms's CPU per request beside the peers').
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Microseconds of CPU spent by `pid` and its descendants so far; 0 where /proc cannot tell. */
export function processTreeCpuMicroseconds(pid: number): number {
  let total = 0;
  for (const member of [pid, ...descendants(pid)]) total += processCpuMicroseconds(member);
  return total;
}

function processCpuMicroseconds(pid: number): number {
  let nanoseconds = 0;
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const thread of threads) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return nanoseconds / 1000;
}

/** Every process whose parent chain reaches `pid`. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The fields after the command name, which may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // Gone since the listing.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.pop()!;
    for (const [child, itsParent] of parents)
      if (itsParent === parent) {
        found.push(child);
        queue.push(child);
      }
  }
  return found;
}
