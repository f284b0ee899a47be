/**
 * A tool call a model wrote into its text in its own syntax, which the engine's tool parser did
 * not take out (issue 35: the complaint heard most often from self-hosted agents is a call that
 * never runs because it arrived as text). One parser per syntax, each in a file of this folder,
 * reads such calls; leaked-call-reader.ts decides where one may stand and holds the text back
 * while it may be one.
 */
import type { OfferedTool } from '../../call/model-call.js';
import { jsonValueEnd } from '../../call/json-scan.js';

/** A call read from text. */
export interface TextCall {
  tool: OfferedTool;
  input: Record<string, unknown>;
}

export type SyntaxReading =
  /** Whole calls, from the start of the text up to `end`. */
  | { kind: 'calls'; calls: TextCall[]; end: number }
  /** Undecided: more text may make it a call. */
  | { kind: 'partial' }
  /** No call of this syntax: something else, a tool that was not offered, or input that does not parse. */
  | { kind: 'none' };

export interface ReadContext {
  /** The reply has ended: nothing more will come, so a call is whole without its closing marker. */
  final: boolean;
  /** The offered tool of that name. */
  offered(name: string): OfferedTool | undefined;
  /** Whether some offered tool's name starts with `prefix`: a name still arriving. */
  namePrefix(prefix: string): boolean;
}

/** A syntax; its name, as a backend's `textCallSyntaxes` gives it, is its key in text-call-syntaxes.ts. */
export interface TextCallSyntax {
  /** Texts that open a call of this syntax wherever they stand outside a code block. */
  markers: readonly string[];
  /** The brackets that open a call of this syntax at the start of a line (bare JSON). */
  lineStarts: readonly string[];
  /** Reads calls from `text`, which starts with one of `markers`, or at a line's start with one of `lineStarts`. */
  read(text: string, context: ReadContext): SyntaxReading;
}

export const NONE: SyntaxReading = { kind: 'none' };
export const PARTIAL: SyntaxReading = { kind: 'partial' };

/** More text could come: partial; the reply ended: none. */
export function undecided(context: ReadContext): SyntaxReading {
  return context.final ? NONE : PARTIAL;
}

/** The JSON value at `at` in `text` (after whitespace), and where it ends; partial while it runs past the text. */
export function jsonAt(
  text: string,
  at: number,
  context: ReadContext,
): { value: unknown; end: number } | SyntaxReading {
  const end = jsonValueEnd(text, at);
  if (end === undefined) return undecided(context);
  // A number or a literal that reaches the end of the text may go on.
  if (end === text.length && !context.final && !'{["'.includes(text[skipSpace(text, at)] ?? '')) return PARTIAL;
  try {
    return { value: JSON.parse(text.slice(at, end)) as unknown, end };
  } catch {
    return NONE;
  }
}

/** Whether `reading` is a value rather than a verdict. */
export function isValue(
  reading: { value: unknown; end: number } | SyntaxReading,
): reading is { value: unknown; end: number } {
  return 'end' in reading && !('kind' in reading);
}

/**
 * The call an object describes, `{"name": ..., "arguments" | "parameters": ...}` (the input may be
 * an object or the JSON text of one, as some models write it), when it names an offered tool.
 */
export function callOfObject(value: unknown, context: ReadContext): TextCall | undefined {
  if (!isObject(value)) return undefined;
  const described = isObject(value.function) ? value.function : value;
  const name = described.name;
  if (typeof name !== 'string') return undefined;
  const tool = context.offered(name);
  if (!tool) return undefined;
  const input = inputOf(described.arguments ?? described.parameters ?? {});
  return input === undefined ? undefined : { tool, input };
}

/**
 * The call an object describes when it holds a call's fields and nothing else (`fields`): a
 * bare JSON object is read as a call only so, since a reply that quotes JSON looks the same.
 */
export function callOfBareObject(
  value: unknown,
  fields: readonly string[],
  context: ReadContext,
): TextCall | undefined {
  if (!isObject(value) || Object.keys(value).some((key) => !fields.includes(key))) return undefined;
  return callOfObject(value, context);
}

/** An input as written: an object, or a string holding one's JSON. */
export function inputOf(written: unknown): Record<string, unknown> | undefined {
  if (typeof written === 'string') {
    if (written.trim() === '') return {};
    try {
      return inputOf(JSON.parse(written) as unknown);
    } catch {
      return undefined;
    }
  }
  return isObject(written) ? written : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `at` moved past whitespace. */
export function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at += 1;
  return at;
}

/**
 * Whether `text` at `at` holds `expected`: `yes`, `no`, or `maybe` while the text ends inside it.
 */
export function literalAt(text: string, at: number, expected: string): 'yes' | 'no' | 'maybe' {
  const present = text.slice(at, at + expected.length);
  if (present === expected) return 'yes';
  return expected.startsWith(present) ? 'maybe' : 'no';
}
