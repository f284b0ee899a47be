/** How the console writes numbers and times. */

const whole = new Intl.NumberFormat('en');

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : whole.format(value);
}

/** Milliseconds as `340 ms` or `2.4 s`. */
export function duration(milliseconds: number | null | undefined): string {
  if (milliseconds === null || milliseconds === undefined) return '–';
  return milliseconds < 1000 ? `${Math.round(milliseconds)} ms` : `${(milliseconds / 1000).toFixed(1)} s`;
}

/** A time of day, local, to the second. */
export function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString('en-GB', { hour12: false });
}

/** How long until `iso`, roughly: `in 3 h 12 min`. */
export function until(iso: string): string {
  const minutes = Math.max(0, Math.round((Date.parse(iso) - Date.now()) / 60_000));
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h ${minutes % 60} min`;
  return `in ${Math.round(hours / 24)} days`;
}
