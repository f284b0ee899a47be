/**
 * Every syntax a call left in a reply's text is read in (issue 35), tried in this order where a
 * call may stand. A model writes one syntax, the one its chat template teaches it, and the
 * engine does not say which model it serves, so all are tried: each needs its own markers or a
 * line-start bracket, an offered tool's name and input that parses, and the reader adds that
 * nothing but calls may follow, so prose that quotes a call stays prose.
 */
import { FUNCTION_TAG } from './function-tag.js';
import { HARMONY_CALL } from './harmony-call.js';
import { HERMES_TOOL_CALL } from './hermes-tool-call.js';
import { LLAMA_JSON } from './llama-json.js';
import { MISTRAL_TOOL_CALLS } from './mistral-tool-calls.js';
import type { TextCallSyntax } from './text-call.js';

export const TEXT_CALL_SYNTAXES: readonly TextCallSyntax[] = [
  HERMES_TOOL_CALL,
  FUNCTION_TAG,
  LLAMA_JSON,
  MISTRAL_TOOL_CALLS,
  HARMONY_CALL,
];
