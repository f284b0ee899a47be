// The body of the memory watchdog's worker thread (memory-watchdog.ts). Plain JavaScript, so that
// it starts without tsx: it needs nothing but node:fs and node:worker_threads.
//
// Messages from the main thread:
//   { type: 'watch', id, pid, launcherPid, limitKb, verdict }: verdict is a SharedArrayBuffer
//   { type: 'unwatch', id }
// Every POLL_MS it reads each watched process's resident memory from /proc; one over its limit
// is killed here (SIGKILL, with its namespace launcher, as SandboxProcess.kill does), and its
// verdict written before the kill, so that the main thread knows why the process died as soon
// as it sees it die, whatever order its events come in.
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

const POLL_MS = 25;
/** Field 22 of /proc/<pid>/stat: when the process started, so that a reused pid is never killed. */
const START_TIME_FIELD = 22;

/** id -> { pid, limitKb, startTime, verdict } */
const watched = new Map();
let timer;

parentPort.on('message', (message) => {
  if (message.type === 'watch') {
    const startTime = readStartTime(message.pid);
    if (startTime === undefined) return;
    watched.set(message.id, { ...message, startTime });
    timer ??= setInterval(poll, POLL_MS);
  } else if (message.type === 'unwatch') {
    watched.delete(message.id);
    if (watched.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  }
});

function poll() {
  for (const [id, entry] of watched) {
    const residentKb = readResidentKb(entry.pid);
    if (residentKb === undefined || readStartTime(entry.pid) !== entry.startTime) {
      // Gone, or its pid already belongs to another process: the main thread unwatches it.
      watched.delete(id);
      continue;
    }
    if (residentKb <= entry.limitKb) continue;
    const flag = new Int32Array(entry.verdict, 0, 1);
    const figures = new Float64Array(entry.verdict, 8, 2);
    figures[0] = residentKb;
    figures[1] = performance.timeOrigin + performance.now();
    Atomics.store(flag, 0, 1);
    killQuietly(entry.pid);
    if (entry.launcherPid !== entry.pid) killQuietly(entry.launcherPid);
    watched.delete(id);
  }
}

function killQuietly(pid) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone just now.
  }
}

function readResidentKb(pid) {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return undefined;
  }
}

function readStartTime(pid) {
  try {
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[START_TIME_FIELD - 3];
  } catch {
    return undefined;
  }
}
