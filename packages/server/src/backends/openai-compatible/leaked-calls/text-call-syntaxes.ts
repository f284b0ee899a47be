/**
 * Every syntax a call left in a reply's text is read in (issue 35), tried in this order where a
 * call may stand. A model writes one syntax, the one its chat template teaches it, and the
 * engine does not say which model it serves, so all are tried: each needs its own markers or a
 * line-start bracket, an offered tool's name and input that parses, and the reader adds that
 * nothing but calls may follow, so prose that quotes a call stays prose. A backend that knows
 * its model's syntax may name it alone (`textCallSyntaxes`), or none.
 */
import { FUNCTION_TAG } from './function-tag.js';
import { HARMONY_CALL } from './harmony-call.js';
import { HERMES_TOOL_CALL } from './hermes-tool-call.js';
import { LLAMA_JSON } from './llama-json.js';
import { MISTRAL_TOOL_CALLS } from './mistral-tool-calls.js';
import type { TextCallSyntax } from './text-call.js';
import { TEXT_CALL_SYNTAX_NAMES, type TextCallSyntaxName } from '../openai-compatible-config.js';

/** Each syntax by the name a backend's `textCallSyntaxes` gives it: one per name, or no type check. */
const BY_NAME: Record<TextCallSyntaxName, TextCallSyntax> = {
  hermes: HERMES_TOOL_CALL,
  'function-tag': FUNCTION_TAG,
  'llama-json': LLAMA_JSON,
  mistral: MISTRAL_TOOL_CALLS,
  harmony: HARMONY_CALL,
};

export const TEXT_CALL_SYNTAXES: readonly TextCallSyntax[] = TEXT_CALL_SYNTAX_NAMES.map((name) => BY_NAME[name]);

/** The syntaxes a backend reads, in the order above (default: all). */
export function textCallSyntaxes(names: readonly TextCallSyntaxName[] | undefined): readonly TextCallSyntax[] {
  return names === undefined
    ? TEXT_CALL_SYNTAXES
    : TEXT_CALL_SYNTAX_NAMES.filter((name) => names.includes(name)).map((name) => BY_NAME[name]);
}
