/**
 * Hermes' syntax, which Qwen 2.5 and Qwen 3 use too: `<tool_call>\n{"name": "Bash", "arguments":
 * {"command": "ls"}}\n</tool_call>` (the chat templates' own words, e.g. Qwen3's tokenizer_config
 * `chat_template`; vLLM's `hermes` tool parser). Two objects inside one tag are two calls: a
 * model that ran its parallel calls together. The closing tag may be missing at the reply's end
 * (a model stopped on its end-of-turn token first).
 */
import {
  callOfObject,
  isValue,
  jsonAt,
  literalAt,
  NONE,
  PARTIAL,
  skipSpace,
  type ReadContext,
  type SyntaxReading,
  type TextCall,
  type TextCallSyntax,
} from './text-call.js';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

export const HERMES_TOOL_CALL: TextCallSyntax = {
  markers: [OPEN],
  lineStarts: [],
  read(text: string, context: ReadContext): SyntaxReading {
    const calls: TextCall[] = [];
    let at = OPEN.length;
    for (;;) {
      at = skipSpace(text, at);
      const closing = literalAt(text, at, CLOSE);
      if (closing === 'yes') return calls.length > 0 ? { kind: 'calls', calls, end: at + CLOSE.length } : NONE;
      if (at >= text.length || closing === 'maybe') {
        if (!context.final) return PARTIAL;
        return calls.length > 0 && at >= text.length ? { kind: 'calls', calls, end: at } : NONE;
      }
      if (text[at] !== '{') return NONE;
      const object = jsonAt(text, at, context);
      if (!isValue(object)) return object;
      const call = callOfObject(object.value, context);
      if (!call) return NONE;
      calls.push(call);
      at = object.end;
    }
  },
};
