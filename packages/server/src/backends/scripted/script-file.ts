/**
 * The scripted backend's `script`: a JSON file of
 * `[{"when": "<regex on the last user turn's text>", "steps": [[blocks], ...]}]`.
 * Step k is what the "model" outputs at its k-th step of the turn, as wire content blocks.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { describeIssue } from '@model-messages/protocol';
import { FieldError } from '../../support/field-error.js';

const jsonObject = z.record(z.string(), z.unknown());

export const plannedBlock = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string().min(1) }),
  z.strictObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() }),
  z.strictObject({
    type: z.literal('tool_use'),
    id: z.string().optional(),
    name: z.string().min(1),
    input: jsonObject,
  }),
  z.strictObject({
    type: z.literal('server_tool_use'),
    id: z.string().optional(),
    name: z.string().min(1),
    input: jsonObject,
  }),
]);

export type PlannedBlock = z.infer<typeof plannedBlock>;

const scriptEntry = z.strictObject({
  when: z.string().refine(isValidRegex, 'must be a valid regular expression'),
  steps: z.array(z.array(plannedBlock).min(1)).min(1),
});

const scriptFile = z.array(scriptEntry);

export interface ScriptEntry {
  when: RegExp;
  steps: PlannedBlock[][];
}

function isValidRegex(source: string): boolean {
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

/** Reads and validates a script file; errors are the backend's `script` field, naming the file and the entry. */
export function loadScript(path: string): ScriptEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new FieldError(
      'script',
      `${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new FieldError('script', `${path}: not valid JSON (${(error as Error).message})`);
  }
  const result = scriptFile.safeParse(json);
  if (!result.success) throw new FieldError('script', `${path}: ${describeIssue(result.error.issues)}`);
  return result.data.map((entry) => ({ when: new RegExp(entry.when, 'u'), steps: entry.steps }));
}

/** The blocks for `step` of the first entry whose `when` matches, or undefined (then: default answer). */
export function scriptedStep(
  script: readonly ScriptEntry[],
  lastUserText: string,
  step: number,
): PlannedBlock[] | undefined {
  const entry = script.find((candidate) => candidate.when.test(lastUserText));
  return entry?.steps[step];
}
