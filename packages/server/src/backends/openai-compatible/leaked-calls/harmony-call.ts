/**
 * gpt-oss's harmony format: a call is a message to `functions.NAME`, `<|start|>assistant<|channel|>
 * commentary to=functions.Bash <|constrain|>json<|message|>{"command": "ls"}<|call|>`, the
 * recipient before or after the channel (OpenAI's harmony spec). Leaked into the text it keeps
 * some of that header; an engine that drops special tokens leaves `commentary to=functions.Bash
 * json{"command": "ls"}`. A call is read from its header, which must name an offered function,
 * and the JSON after it.
 */
import {
  inputOf,
  isValue,
  jsonAt,
  literalAt,
  NONE,
  skipSpace,
  undecided,
  type ReadContext,
  type SyntaxReading,
  type TextCallSyntax,
} from './text-call.js';

const MESSAGE = '<|message|>';
const CALL = '<|call|>';
/** The header of a call: any order of start, role, channel and format, with the recipient. */
const HEADER =
  /^(?:<\|start\|>)?(?:assistant)?\s*(?:<\|channel\|>)?\s*(?:commentary|analysis)?\s*to=functions\.([\w.-]+)\s*(?:<\|channel\|>\s*commentary)?\s*(?:<\|constrain\|>)?\s*(?:json)?\s*$/;
/** A header is a line at most. */
const HEADER_LIMIT = 200;

export const HARMONY_CALL: TextCallSyntax = {
  markers: ['<|start|>', '<|channel|>', 'commentary to=functions.', 'to=functions.'],
  lineStarts: [],
  read(text: string, context: ReadContext): SyntaxReading {
    const message = text.indexOf(MESSAGE);
    const json = text.indexOf('{');
    const ends = [message, json].filter((index) => index >= 0);
    if (ends.length === 0) {
      return text.length > HEADER_LIMIT || text.includes('\n') || !namePossible(text, context)
        ? NONE
        : undecided(context);
    }
    const headerEnd = Math.min(...ends);
    const header = HEADER.exec(text.slice(0, headerEnd));
    const tool = header ? context.offered(header[1]!) : undefined;
    if (!tool) return NONE;
    let at = headerEnd === message ? headerEnd + MESSAGE.length : headerEnd;
    const body = jsonAt(text, at, context);
    if (!isValue(body)) return body;
    const input = inputOf(body.value);
    if (!input) return NONE;
    at = skipSpace(text, body.end);
    const call = literalAt(text, at, CALL);
    if (call === 'maybe' && at < text.length) return undecided(context);
    return { kind: 'calls', calls: [{ tool, input }], end: call === 'yes' ? at + CALL.length : body.end };
  },
};

/** Before the header ends: its recipient's name, as far as it came, can still be an offered tool's. */
function namePossible(text: string, context: ReadContext): boolean {
  const recipient = /to=functions\.([\w.-]*)(\s|<)?/.exec(text);
  if (!recipient) return true;
  return recipient[2] === undefined ? context.namePrefix(recipient[1]!) : context.offered(recipient[1]!) !== undefined;
}
