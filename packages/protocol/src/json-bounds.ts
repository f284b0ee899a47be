/**
 * Bounds on a request body's JSON, checked before anything else reads it: at most
 * `MAX_JSON_DEPTH` levels of nesting and `MAX_JSON_VALUES` values in all. Every check before
 * admission (validation, the endpoint rules, the signed blocks, the prompt and its count) costs
 * time per value on the service's one event loop, so the count of values bounds that time; a
 * 32 MB body of 16 million tiny values (`[1,1,...]`) is refused before it costs seconds and
 * gigabytes.
 *
 * Two readers apply the one rule: `assertJsonBounds` walks a parsed value, and
 * `assertJsonTextBounds` scans JSON text without parsing it (the service scans bodies too large
 * to parse on its event loop in a worker first, so a body past the bounds is never parsed). Both
 * count values in document order and stop at the first one past a bound, so they refuse the same
 * bodies with the same message. Neither recurses.
 */
import { MAX_JSON_DEPTH, MAX_JSON_VALUES } from './constants.js';
import { ServiceError } from './errors.js';

export interface JsonBounds {
  maxDepth: number;
  maxValues: number;
}

export const REQUEST_JSON_BOUNDS: JsonBounds = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES };

/** An open array or object and where the reading is in it. */
interface Frame {
  container: object;
  /** An object's keys; undefined for an array. */
  keys: string[] | undefined;
  size: number;
  /** Entries read so far; the last of them is the one being read. */
  read: number;
}

/** Throws a 400 when `value` nests deeper than `maxDepth` containers or holds more than `maxValues` values. */
export function assertJsonBounds(value: unknown, bounds: JsonBounds = REQUEST_JSON_BOUNDS): void {
  if (value === null || typeof value !== 'object') return;
  let values = 1;
  const frames: Frame[] = [frameOf(value)];
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    if (frame.read === frame.size) {
      frames.pop();
      continue;
    }
    const child = frame.keys
      ? (frame.container as Record<string, unknown>)[frame.keys[frame.read]!]
      : (frame.container as unknown[])[frame.read];
    frame.read += 1;
    values += 1;
    if (values > bounds.maxValues) throw tooManyValues(frames.map(placeOf), bounds.maxValues);
    if (child !== null && typeof child === 'object') {
      if (frames.length >= bounds.maxDepth) throw tooDeep(bounds.maxDepth);
      frames.push(frameOf(child));
    }
  }
}

function frameOf(container: object): Frame {
  if (Array.isArray(container)) return { container, keys: undefined, size: container.length, read: 0 };
  const keys = Object.keys(container);
  return { container, keys, size: keys.length, read: 0 };
}

function placeOf(frame: Frame): Place {
  return { entries: frame.read, segment: () => (frame.keys ? frame.keys[frame.read - 1]! : String(frame.read - 1)) };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * The same bounds over JSON text as UTF-8 bytes, without parsing it. For valid JSON it counts as
 * `assertJsonBounds` does: an array's entry at its first byte or the comma before it, an
 * object's at the colon before its value. What it makes of text that is not JSON does not
 * matter: the parser refuses that afterwards.
 */
export function assertJsonTextBounds(bytes: Buffer, bounds: JsonBounds = REQUEST_JSON_BOUNDS): void {
  const depth = bounds.maxDepth;
  // Per open container: array or object, entries read, and the byte range of an object's current key.
  const isArray = new Uint8Array(depth);
  const entries = new Float64Array(depth);
  const keyStart = new Float64Array(depth);
  const keyEnd = new Float64Array(depth);
  let open = 0;
  let values = 0;
  // The next significant byte starts a value: the body's first, or an array's first entry.
  let valueStarts = true;
  // The next string is an object's key: after `{` or an object's comma.
  let keyNext = false;
  const count = (): void => {
    values += 1;
    if (values > bounds.maxValues) throw tooManyValues(textPlaces(), bounds.maxValues);
  };
  const textPlaces = (): Place[] =>
    Array.from({ length: open }, (_, level) => ({
      entries: entries[level]!,
      segment: () =>
        isArray[level] === 1 ? String(entries[level]! - 1) : keyText(bytes, keyStart[level]!, keyEnd[level]!),
    }));
  for (let at = 0; at < bytes.length; at += 1) {
    const byte = bytes[at]!;
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    if (valueStarts) {
      valueStarts = false;
      if (byte === CLOSE_ARRAY && open > 0 && isArray[open - 1] === 1) {
        open -= 1;
        continue;
      }
      if (open > 0) entries[open - 1]! += 1;
      count();
    }
    if (byte === QUOTE) {
      const end = closingQuote(bytes, at);
      if (keyNext && open > 0) {
        keyStart[open - 1] = at;
        keyEnd[open - 1] = end;
        keyNext = false;
      }
      at = end;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (open >= depth) throw tooDeep(depth);
      isArray[open] = byte === OPEN_ARRAY ? 1 : 0;
      entries[open] = 0;
      open += 1;
      valueStarts = byte === OPEN_ARRAY;
      keyNext = byte === OPEN_OBJECT;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      if (open > 0) open -= 1;
      keyNext = false;
    } else if (byte === COMMA && open > 0) {
      if (isArray[open - 1] === 1) valueStarts = true;
      else keyNext = true;
    } else if (byte === COLON && open > 0) {
      entries[open - 1]! += 1;
      count();
    }
  }
}

/** Where the string that opens at `start` closes (its last byte when it never does). */
function closingQuote(bytes: Buffer, start: number): number {
  let at = start;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return bytes.length - 1;
    // A quote after an odd number of backslashes is part of the string.
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
}

function keyText(bytes: Buffer, start: number, end: number): string {
  const raw = bytes.toString('utf8', start, end + 1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return raw;
  }
}

/** An open container on the path to the value being read. */
interface Place {
  entries: number;
  /** This container's name for the entry being read. */
  segment: () => string;
}

/**
 * Names the container on the path that holds the most entries read so far (the array that is
 * too long, in practice), so that the message points at what to shorten.
 */
function tooManyValues(places: readonly Place[], maxValues: number): ServiceError {
  let largest = 0;
  for (let level = 1; level < places.length; level += 1) {
    if (places[level]!.entries > places[largest]!.entries) largest = level;
  }
  const path = places.slice(0, largest).map((place) => place.segment());
  const where = path.length > 0 ? path.join('.') : 'body';
  return new ServiceError(
    'invalid_request',
    `${where}: too many values; a request body holds at most ${maxValues} JSON values (objects, arrays, strings, numbers, booleans and nulls)`,
  );
}

function tooDeep(maxDepth: number): ServiceError {
  return new ServiceError('invalid_request', `The request body nests deeper than ${maxDepth} levels.`);
}
