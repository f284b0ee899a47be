/** Checked numeric flags for the benchmarks' command lines: a typo stops the run, never skews it. */

export function positiveNumber(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} must be a positive number, got ${JSON.stringify(text)}`);
  return value;
}

export function positiveInteger(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return value;
}
