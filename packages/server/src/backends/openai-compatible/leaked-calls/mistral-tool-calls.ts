/**
 * Mistral's `[TOOL_CALLS]`: a JSON array of calls, `[TOOL_CALLS][{"name": "Bash", "arguments":
 * {"command": "ls"}}]` (tokenizer v3 to v7), or a call per marker, `[TOOL_CALLS]Bash[ARGS]{"command":
 * "ls"}`, with `[CALL_ID]id` before `[ARGS]` in some versions (v11 and later; mistral-common's
 * tokenizers). An engine that drops special tokens from the text leaves the array bare, so an
 * array of calls at the start of a line is read too.
 */
import {
  callOfBareObject,
  inputOf,
  isValue,
  jsonAt,
  literalAt,
  NONE,
  skipSpace,
  undecided,
  type ReadContext,
  type SyntaxReading,
  type TextCall,
  type TextCallSyntax,
} from './text-call.js';

const MARKER = '[TOOL_CALLS]';
const CALL_ID = '[CALL_ID]';
const ARGS = '[ARGS]';
const CALL_FIELDS = ['name', 'arguments', 'parameters', 'id', 'type', 'function'];

export const MISTRAL_TOOL_CALLS: TextCallSyntax = {
  markers: [MARKER],
  lineStarts: ['['],
  read(text: string, context: ReadContext): SyntaxReading {
    const marked = text.startsWith(MARKER);
    const at = skipSpace(text, marked ? MARKER.length : 0);
    if (at >= text.length) return undecided(context);
    if (text[at] === '[') return readArray(text, at, context);
    return marked ? readNamed(text, at, context) : NONE;
  },
};

function readArray(text: string, at: number, context: ReadContext): SyntaxReading {
  const opening = /^\[\s*(\{\s*"?)?/.exec(text.slice(at));
  // A bare array must open with an object; before it shows, it may still.
  if (!opening?.[1] && skipSpace(text, at + 1) < text.length) return NONE;
  const array = jsonAt(text, at, context);
  if (!isValue(array)) return array;
  if (!Array.isArray(array.value) || array.value.length === 0) return NONE;
  const calls: TextCall[] = [];
  for (const item of array.value) {
    const call = callOfBareObject(item, CALL_FIELDS, context);
    if (!call) return NONE;
    calls.push(call);
  }
  return { kind: 'calls', calls, end: array.end };
}

/** `NAME[CALL_ID]id[ARGS]{...}`, from the name on. */
function readNamed(text: string, at: number, context: ReadContext): SyntaxReading {
  const name = /^[A-Za-z0-9_.-]*/.exec(text.slice(at))![0];
  let next = at + name.length;
  if (next >= text.length) return context.namePrefix(name) ? undecided(context) : NONE;
  const tool = context.offered(name);
  if (!tool) return NONE;
  const callId = literalAt(text, next, CALL_ID);
  if (callId === 'maybe') return undecided(context);
  if (callId === 'yes') next += CALL_ID.length + /^[A-Za-z0-9]*/.exec(text.slice(next + CALL_ID.length))![0].length;
  const args = literalAt(text, next, ARGS);
  if (args !== 'yes') return args === 'maybe' ? undecided(context) : NONE;
  const body = jsonAt(text, next + ARGS.length, context);
  if (!isValue(body)) return body;
  const input = inputOf(body.value);
  return input ? { kind: 'calls', calls: [{ tool, input }], end: body.end } : NONE;
}
