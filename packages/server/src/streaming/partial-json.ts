/**
 * Tool input that was cut off by the output budget is incomplete JSON. Rather than drop it,
 * close what is open (string, arrays, objects) and parse the longest prefix that parses.
 * Returns {} only when nothing of an object survives.
 */
export function parsePartialJsonObject(text: string): Record<string, unknown> {
  for (let end = text.length; end > 0; end -= 1) {
    const candidate = closeOpenStructures(text.slice(0, end));
    if (candidate === undefined) continue;
    try {
      const value: unknown = JSON.parse(candidate);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // A cut inside a number, literal or after a key: try a shorter prefix.
    }
  }
  return {};
}

/** Appends the closing quote and brackets that `prefix` still needs, or undefined if unbalanced. */
function closeOpenStructures(prefix: string): string | undefined {
  const closers: string[] = [];
  let inString = false;
  let escaped = false;
  for (const character of prefix) {
    if (inString) {
      if (escaped) escaped = false;
      else if (character === '\\') escaped = true;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') inString = true;
    else if (character === '{') closers.push('}');
    else if (character === '[') closers.push(']');
    else if (character === '}' || character === ']') {
      if (closers.pop() !== character) return undefined;
    }
  }
  if (escaped) return undefined;
  const trimmed = inString ? `${prefix}"` : prefix.replace(/[,:\s]+$/, '');
  return trimmed + closers.reverse().join('');
}
