/**
 * A process's memory as the kernel keeps it (Linux only; elsewhere, or once the process is gone,
 * undefined): VmRSS, its resident size now, and VmHWM, the highest resident size of its whole life.
 */
import { readFileSync } from 'node:fs';

export function memoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kilobytes = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  return kilobytes === undefined ? undefined : Number(kilobytes);
}
