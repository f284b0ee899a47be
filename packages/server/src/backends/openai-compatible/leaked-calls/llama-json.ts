/**
 * Llama 3's JSON calls: `<|python_tag|>{"name": "Bash", "parameters": {"command": "ls"}}`, or the
 * same object bare at the start of a line (Meta's Llama 3.1 and 3.2 prompt formats; 3.2 also
 * writes `{"type": "function", "name": ..., "parameters": ...}`), several separated by `;`.
 * vLLM's `llama3_json` and `pythonic` parsers miss these when the model adds text around them.
 *
 * Bare JSON is what a reply that quotes JSON looks like too, so it must read as a call from its
 * first key (`name`, `type`, `function`), name an offered tool, and hold nothing but a call's
 * fields; the reader (leaked-call-reader.ts) adds that nothing but calls may follow it.
 */
import {
  callOfBareObject,
  isValue,
  jsonAt,
  NONE,
  skipSpace,
  undecided,
  type ReadContext,
  type SyntaxReading,
  type TextCall,
  type TextCallSyntax,
} from './text-call.js';

const PYTHON_TAG = '<|python_tag|>';
const CALL_FIELDS = ['name', 'type', 'function', 'parameters', 'arguments', 'id'];

export const LLAMA_JSON: TextCallSyntax = {
  markers: [PYTHON_TAG],
  lineStarts: ['{'],
  read(text: string, context: ReadContext): SyntaxReading {
    const calls: TextCall[] = [];
    let at = text.startsWith(PYTHON_TAG) ? PYTHON_TAG.length : 0;
    let end = at;
    for (;;) {
      at = skipSpace(text, at);
      if (at >= text.length)
        return calls.length > 0 && context.final ? { kind: 'calls', calls, end } : undecided(context);
      if (text[at] !== '{') return calls.length > 0 ? { kind: 'calls', calls, end } : NONE;
      if (!mayBeCall(text.slice(at), context)) return calls.length > 0 ? { kind: 'calls', calls, end } : NONE;
      const object = jsonAt(text, at, context);
      if (!isValue(object)) return object;
      const call = callOfBareObject(object.value, CALL_FIELDS, context);
      if (!call) return NONE;
      calls.push(call);
      end = object.end;
      at = skipSpace(text, end);
      if (text[at] === ';') at += 1;
    }
  },
};

/** Whether an object's text, as far as it came, can still be a call: its first key, and the name once it shows. */
function mayBeCall(text: string, context: ReadContext): boolean {
  const key = /^\{\s*"([^"]*)("?)/.exec(text);
  if (!key) return /^\{\s*$/.test(text);
  const keys = ['name', 'type', 'function'];
  if (!(key[2] === '"' ? keys.includes(key[1]!) : keys.some((candidate) => candidate.startsWith(key[1]!))))
    return false;
  const name = /"name"\s*:\s*"([^"\\]*)("?)/.exec(text);
  if (!name) return true;
  return name[2] === '"' ? context.offered(name[1]!) !== undefined : context.namePrefix(name[1]!);
}
