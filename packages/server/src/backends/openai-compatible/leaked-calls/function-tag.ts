/**
 * Calls in a `<function=NAME>` tag. Qwen3-Coder writes its input as one tag per parameter, each
 * value as plain text (its chat template; vLLM's `qwen3_coder` tool parser):
 *
 *     <tool_call>
 *     <function=Bash>
 *     <parameter=command>
 *     ls -la
 *     </parameter>
 *     </function>
 *     </tool_call>
 *
 * and Llama 3.1's custom tool format writes JSON inside the tag: `<function=Bash>{"command":
 * "ls"}</function>` (Meta's prompt format). A parameter's text is read by its property's type in
 * the tool's schema, as vLLM's parser reads it: a string as it is, a number, a boolean, or JSON
 * for anything else (left a string where it is not JSON, for the check to judge).
 */
import type { OfferedTool } from '../../call/model-call.js';
import {
  isValue,
  jsonAt,
  literalAt,
  NONE,
  skipSpace,
  undecided,
  inputOf,
  isObject,
  type ReadContext,
  type SyntaxReading,
  type TextCall,
  type TextCallSyntax,
} from './text-call.js';

const WRAPPER_OPEN = '<tool_call>';
const WRAPPER_CLOSE = '</tool_call>';
const FUNCTION_OPEN = '<function=';
const FUNCTION_CLOSE = '</function>';
const PARAMETER_OPEN = '<parameter=';
const PARAMETER_CLOSE = '</parameter>';

export const FUNCTION_TAG: TextCallSyntax = {
  markers: [WRAPPER_OPEN, FUNCTION_OPEN],
  lineStarts: [],
  read(text: string, context: ReadContext): SyntaxReading {
    const wrapped = text.startsWith(WRAPPER_OPEN);
    let at = wrapped ? skipSpace(text, WRAPPER_OPEN.length) : 0;
    const calls: TextCall[] = [];
    for (;;) {
      const opening = literalAt(text, at, FUNCTION_OPEN);
      if (opening === 'maybe') return undecided(context);
      if (opening === 'no') break;
      const read = readFunction(text, at + FUNCTION_OPEN.length, context);
      if ('kind' in read) return read;
      calls.push(read.call);
      at = skipSpace(text, read.end);
      // Unwrapped, a tag is one call; the next is read as a call of its own.
      if (!wrapped) return { kind: 'calls', calls, end: read.end };
    }
    if (calls.length === 0) return NONE;
    const closing = literalAt(text, at, WRAPPER_CLOSE);
    if (closing === 'yes') return { kind: 'calls', calls, end: at + WRAPPER_CLOSE.length };
    if (closing === 'maybe')
      return context.final && at >= text.length ? { kind: 'calls', calls, end: at } : undecided(context);
    return NONE;
  },
};

/** One `<function=NAME>...</function>`, from just after `<function=`. */
function readFunction(
  text: string,
  from: number,
  context: ReadContext,
): { call: TextCall; end: number } | SyntaxReading {
  const nameEnd = text.indexOf('>', from);
  if (nameEnd < 0) return /[\s<]/.test(text.slice(from)) ? NONE : undecided(context);
  const tool = context.offered(text.slice(from, nameEnd).trim());
  if (!tool) return NONE;
  let at = skipSpace(text, nameEnd + 1);
  let input: Record<string, unknown> = {};
  if (text[at] === '{') {
    const body = jsonAt(text, at, context);
    if (!isValue(body)) return body;
    const parsed = inputOf(body.value);
    if (!parsed) return NONE;
    input = parsed;
    at = skipSpace(text, body.end);
  } else {
    for (;;) {
      at = skipSpace(text, at);
      const parameter = literalAt(text, at, PARAMETER_OPEN);
      if (parameter === 'maybe' && at < text.length) return undecided(context);
      if (parameter !== 'yes') break;
      const keyEnd = text.indexOf('>', at);
      const valueEnd = keyEnd < 0 ? -1 : text.indexOf(PARAMETER_CLOSE, keyEnd);
      if (valueEnd < 0) return undecided(context);
      const key = text.slice(at + PARAMETER_OPEN.length, keyEnd).trim();
      input[key] = parameterValue(
        text
          .slice(keyEnd + 1, valueEnd)
          .replace(/^\n/, '')
          .replace(/\n$/, ''),
        tool,
        key,
      );
      at = valueEnd + PARAMETER_CLOSE.length;
    }
  }
  const closing = literalAt(text, at, FUNCTION_CLOSE);
  if (closing === 'maybe') return undecided(context);
  if (closing === 'no') return NONE;
  return { call: { tool, input }, end: at + FUNCTION_CLOSE.length };
}

/** A parameter's text as its property's type in the schema reads it. */
function parameterValue(raw: string, tool: OfferedTool, key: string): unknown {
  const properties = tool.inputSchema.properties;
  const schema = isObject(properties) ? properties[key] : undefined;
  const declared = isObject(schema) ? schema.type : undefined;
  const types = Array.isArray(declared) ? declared : [declared];
  if (types.includes('string')) return raw;
  const text = raw.trim();
  if (types.includes('integer') || types.includes('number')) {
    const number = Number(text);
    if (text !== '' && Number.isFinite(number)) return number;
  }
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return raw;
  }
}
