/**
 * What compiling a `pattern` with RE2 will cost, read from its text before it is compiled (issue
 * 31). RE2 runs in linear time, but compiling unrolls counted repetitions: `\pL{1000}` is a
 * program of 1,000 instructions that each hold the 1,368 ranges of `\pL` (8 ms and 11 MB), and
 * nine such patterns in a row one of a million instructions (0.6 s, 110 MB), all on the event
 * loop. The estimate follows RE2's compiler: an atom is one instruction holding its ranges, a
 * group the sum of what it holds, a repetition `{n,m}` m copies of its operand. It is an upper
 * bound, not an exact count: it assumes no simplification, and every Unicode class as large as
 * the largest.
 */

export interface PatternCost {
  /** RE2 program instructions. */
  instructions: number;
  /** Range bounds stored in those instructions (two per range), what the program's memory grows with. */
  runes: number;
}

/** `\pL` (letters) stores 1,368 range bounds in re2js; the largest of the classes a pattern is likely to name. */
const UNICODE_CLASS_RUNES = 2_048;
/** `\d`, `\s`, `\w`, `[:alpha:]` and the like, with room for their negations. */
const PERL_CLASS_RUNES = 16;
/** RE2's own ceiling on one repetition count; a larger one is its syntax error, which the compile reports. */
const REPEAT_LIMIT = 1_000;

interface Frame {
  total: PatternCost;
  /** The last atom or group, which a following repetition applies to. */
  last: PatternCost | undefined;
}

export function patternCost(pattern: string): PatternCost {
  const caseFolded = pattern.includes('(?') && /\(\?[a-zA-Z]*i/.test(pattern);
  // Every program begins with a fail and a match-start instruction.
  const stack: Frame[] = [{ total: { instructions: 2, runes: 0 }, last: undefined }];
  let index = 0;
  const atom = (cost: PatternCost): void => {
    const frame = stack.at(-1)!;
    add(frame.total, cost);
    frame.last = cost;
  };
  while (index < pattern.length) {
    const character = pattern[index]!;
    if (character === '\\') {
      const escape = readEscape(pattern, index);
      atom(escape.cost);
      index = escape.end;
    } else if (character === '[') {
      const end = classEnd(pattern, index);
      atom(classCost(pattern.slice(index, end)));
      index = end;
    } else if (character === '(') {
      stack.push({ total: { instructions: 2, runes: 0 }, last: undefined });
      index = groupBodyStart(pattern, index);
    } else if (character === ')' && stack.length > 1) {
      const group = stack.pop()!.total;
      atom(group);
      index += 1;
    } else if (character === '*' || character === '+' || character === '?') {
      add(stack.at(-1)!.total, { instructions: 1, runes: 0 });
      index += 1;
    } else if (character === '{' && repetition(pattern, index) !== undefined) {
      const { copies, optional, end } = repetition(pattern, index)!;
      const frame = stack.at(-1)!;
      if (frame.last !== undefined) {
        // Each optional copy is a branch as well as the copy.
        const repeated = add(scaled(frame.last, copies), { instructions: optional, runes: 0 });
        add(frame.total, add(repeated, scaled(frame.last, -1)));
        frame.last = repeated;
      }
      index = end;
    } else {
      atom({ instructions: 1, runes: character === '.' ? 4 : character === '|' ? 0 : 2 });
      index += 1;
    }
  }
  // An unclosed group is RE2's syntax error; what was read of it still counts.
  const cost = stack.reduce((sum, frame) => add(sum, frame.total), zero());
  return caseFolded ? { instructions: cost.instructions, runes: cost.runes * 2 } : cost;
}

function zero(): PatternCost {
  return { instructions: 0, runes: 0 };
}

function add(sum: PatternCost, cost: PatternCost): PatternCost {
  sum.instructions += cost.instructions;
  sum.runes += cost.runes;
  return sum;
}

function scaled(cost: PatternCost, times: number): PatternCost {
  return { instructions: cost.instructions * times, runes: cost.runes * times };
}

function readEscape(pattern: string, start: number): { cost: PatternCost; end: number } {
  const letter = pattern[start + 1];
  if (letter === 'p' || letter === 'P') {
    const end = pattern[start + 2] === '{' ? closing(pattern, start + 2, '}') : start + 3;
    return { cost: { instructions: 1, runes: UNICODE_CLASS_RUNES }, end };
  }
  if (letter !== undefined && 'dDsSwW'.includes(letter))
    return { cost: { instructions: 1, runes: PERL_CLASS_RUNES }, end: start + 2 };
  if (letter === 'x' && pattern[start + 2] === '{')
    return { cost: { instructions: 1, runes: 2 }, end: closing(pattern, start + 2, '}') };
  if (letter === 'Q') {
    // Literal text up to `\E`: one instruction a character.
    const close = pattern.indexOf('\\E', start + 2);
    const end = close < 0 ? pattern.length : close + 2;
    const length = (close < 0 ? pattern.length : close) - (start + 2);
    return { cost: { instructions: length, runes: 2 * length }, end };
  }
  return { cost: { instructions: 1, runes: 2 }, end: Math.min(start + 2, pattern.length) };
}

/** The index after `[...]`: a `]` right after `[` or `[^` is a member, escapes and `[:name:]` are read whole. */
function classEnd(pattern: string, start: number): number {
  let index = start + 1;
  if (pattern[index] === '^') index += 1;
  if (pattern[index] === ']') index += 1;
  while (index < pattern.length && pattern[index] !== ']') {
    if (pattern[index] === '\\') index += 2;
    else if (pattern.startsWith('[:', index)) index = closing(pattern, index, ']');
    else index += 1;
  }
  return Math.min(index + 1, pattern.length);
}

/** A class is one instruction holding its ranges: two bounds for each member at most, more for named classes. */
function classCost(text: string): PatternCost {
  const unicodeClasses = (text.match(/\\[pP]/g) ?? []).length;
  const namedClasses = (text.match(/\[:|\\[dDsSwW]/g) ?? []).length;
  const negated = text.startsWith('[^') ? 2 : 0;
  return {
    instructions: 1,
    runes: 2 * text.length + unicodeClasses * UNICODE_CLASS_RUNES + namedClasses * PERL_CLASS_RUNES + negated,
  };
}

/** Where a group's contents begin: after `(`, `(?:`, `(?i:`, `(?P<name>` or `(?<name>`; `(?i)` has none. */
function groupBodyStart(pattern: string, start: number): number {
  if (pattern[start + 1] !== '?') return start + 1;
  const name = /^\(\?P?<[^>]*>/.exec(pattern.slice(start, start + 256));
  if (name) return start + name[0].length;
  const flags = /^\(\?[a-zA-Z-]*[:)]/.exec(pattern.slice(start, start + 32));
  return flags ? start + flags[0].length : start + 2;
}

/**
 * `{n}`, `{n,}` or `{n,m}` at `start`: the copies RE2 unrolls (n+1 for `{n,}`) and how many of
 * them are optional, or undefined when it is a literal `{`.
 */
function repetition(pattern: string, start: number): { copies: number; optional: number; end: number } | undefined {
  const match = /^\{(\d+)(,(\d*))?\}\??/.exec(pattern.slice(start, start + 24));
  if (!match) return undefined;
  const least = Math.min(Number(match[1]), REPEAT_LIMIT);
  const most = Math.min(match[2] === undefined ? least : match[3] === '' ? least + 1 : Number(match[3]), REPEAT_LIMIT);
  const copies = Math.max(least, most, 1);
  return { copies, optional: copies - least, end: start + match[0].length };
}

function closing(pattern: string, start: number, character: string): number {
  const close = pattern.indexOf(character, start);
  return close < 0 ? pattern.length : close + 1;
}
