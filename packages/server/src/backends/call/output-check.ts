/**
 * The one check of schema-bound output, for every engine: a tool call's input and an
 * `output_config.format` answer. It decides once what happens to output that fails: when the
 * caller has not seen it yet and the step has output tokens left, it is generated once more (the
 * engine supplies "generate again": under the schema's grammar, or as a forced call it guides, with
 * the failure replayed to the model), and a second failure is a 502 `model_output_invalid`: the
 * engine worked, so a fallback list neither moves on nor charges its circuit for what one sample
 * of the model wrote. Output the caller already saw (streamed under its schema's own grammar)
 * cannot be taken back: a failure there is a 502 at once.
 */
import { schemaViolation, ServiceError } from '@model-messages/protocol';
import type { FormatTarget, OfferedTool } from './model-call.js';

export type Checked<Value> = { value: Value; violation?: undefined } | { value?: undefined; violation: string };

type CheckedTool = Pick<OfferedTool, 'strict' | 'inputSchema' | 'where'>;

/**
 * How much of its schema a call's input is held to after generation (issue 35): `schema`, all of
 * it (a strict tool; an input generated under a grammar wider than its schema); `required`, what
 * every call needs to run, its schema's required fields present (a tool without strict that no
 * grammar of its schema guided: a call missing one is repaired; the other keywords are the
 * client's to judge, as the public API leaves them to it).
 */
export type InputCheck = 'schema' | 'required';

export function inputCheckOf(tool: Pick<OfferedTool, 'strict'>): InputCheck {
  return tool.strict ? 'schema' : 'required';
}

/**
 * A call's input as the model wrote it: JSON, an object, every number within the double range
 * (JSON.parse reads `1e999` as Infinity, which would reach the client as null), and as much of
 * its schema as `against` says. An empty input is `{}`: a call of a tool without parameters
 * (issue 35: an engine that sends empty arguments), which a schema with required fields refuses.
 */
export function checkToolInput(
  json: string,
  tool: CheckedTool,
  against: InputCheck = inputCheckOf(tool),
): Checked<Record<string, unknown>> {
  const parsed = parseJson(json.trim() === '' ? '{}' : json);
  return parsed.violation !== undefined ? parsed : checkToolValue(parsed.value, tool, against);
}

/** The same check of an input already parsed. */
export function checkToolValue(
  value: unknown,
  tool: CheckedTool,
  against: InputCheck = inputCheckOf(tool),
): Checked<Record<string, unknown>> {
  if (hasNonFiniteNumber(value)) return { violation: NON_FINITE };
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { violation: 'the input is not a JSON object' };
  const violation =
    against === 'schema'
      ? schemaViolation(tool.inputSchema, value, tool.where)
      : missingRequired(tool.inputSchema, value as Record<string, unknown>);
  return violation === undefined ? { value: value as Record<string, unknown> } : { violation };
}

/** The first field the schema's top-level `required` names that the input lacks, as a violation. */
function missingRequired(schema: Record<string, unknown>, input: Record<string, unknown>): string | undefined {
  const required = Array.isArray(schema.required) ? schema.required : [];
  const missing = required.find((name) => typeof name === 'string' && !Object.hasOwn(input, name));
  return missing === undefined ? undefined : `/ must have required property '${String(missing)}'`;
}

/** A text answer for `output_config.format`: one JSON value, within the double range, valid against the schema. */
export function checkFormatAnswer(text: string, format: FormatTarget): Checked<unknown> {
  const parsed = parseJson(text);
  if (parsed.violation !== undefined) return parsed;
  const violation = schemaViolation(format.schema, parsed.value, format.where);
  return violation === undefined ? parsed : { violation };
}

function parseJson(text: string): Checked<unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    return { violation: `not JSON (${(error as Error).message})` };
  }
  if (hasNonFiniteNumber(value)) return { violation: NON_FINITE };
  return { value };
}

const NON_FINITE = 'a number is outside the double range';

function hasNonFiniteNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some(hasNonFiniteNumber);
}

export interface Regenerated {
  text: string;
  /** The output budget ran out: the second output is not whole, and is not checked. */
  truncated: boolean;
}

export interface OutputCheck<Value> {
  check: (text: string) => Checked<Value>;
  /** How messages name the output: `the model's answer`, `the model's input for the tool "x"`. */
  subject: string;
  /** Where its schema stands in the request: `output_config.format.schema`, `tools.0.input_schema`. */
  where: string;
  /** The caller has not seen the output yet, so it may be generated again. */
  held: boolean;
  /** Output tokens the step may still spend. */
  remaining: () => number;
  /** The output once more, after `output` failed with `violation`, within `maxTokens`. */
  regenerate: (output: string, violation: string, maxTokens: number) => Promise<Regenerated>;
}

export type Settled<Value> =
  | { text: string; value: Value; regenerated: boolean; truncated: false }
  /** Generated again and cut by the budget: the reply ends on max_tokens with what arrived. */
  | { text: string; value?: undefined; regenerated: true; truncated: true };

/**
 * Accepts `output`, generates it once more, or fails with a 502 saying why. `verdict` is the
 * check of `output` where the engine handed over a parsed value rather than text.
 */
export async function settleOutput<Value>(
  output: string,
  check: OutputCheck<Value>,
  verdict: Checked<Value> = check.check(output),
): Promise<Settled<Value>> {
  const first = verdict;
  if (first.violation === undefined)
    return { text: output, value: first.value as Value, regenerated: false, truncated: false };
  const budget = check.remaining();
  if (!check.held || budget <= 0) throw invalidOutput(check, first.violation, false);
  const second = await check.regenerate(output, first.violation, budget);
  if (second.truncated) return { text: second.text, regenerated: true, truncated: true };
  const checked = check.check(second.text);
  if (checked.violation !== undefined) throw invalidOutput(check, checked.violation, true);
  return { text: second.text, value: checked.value as Value, regenerated: true, truncated: false };
}

function invalidOutput(check: OutputCheck<unknown>, violation: string, twice: boolean): ServiceError {
  return new ServiceError(
    'model_output_invalid',
    `${check.subject} failed ${check.where}${twice ? ' twice' : ''}: ${violation}`,
  );
}

/** How the messages name a tool call's input. */
export function toolInputSubject(name: string): string {
  return `the model's input for the tool "${name}"`;
}

export const ANSWER_SUBJECT = "the model's answer";

/** What the model is told when its format answer is asked for again, after the answer itself. */
export function formatRetryNote(violation: string): string {
  return `That answer does not match the required JSON Schema: ${violation}. Answer again with one JSON value only, matching the schema.`;
}

/** What the model is told when a tool's input is asked for again, as a forced call of that tool. */
export function inputRetryNote(toolName: string, violation: string): string {
  return `An earlier call of the tool "${toolName}" had input that failed its JSON Schema (${violation}); call it again with input that matches the schema.`;
}
