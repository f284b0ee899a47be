/**
 * What llama.cpp's GBNF parser refuses, checked on a compiled grammar before the engine sees it,
 * so that the refusal names the schema (a GrammarCompileError: a 400 for a strict schema, a
 * shape grammar for another) instead of being node-llama-cpp's "Failed to parse grammar" (a
 * 500 naming nothing). Its parser (src/llama-grammar.cpp, parse_sequence) refuses:
 *
 * - a repeated item (`?`, `*`, `+`, `{m,n}`) whose parse created more than
 *   MAX_REPETITION_THRESHOLD (2,000) rules, times the repetition's count. An item creates one
 *   rule per group, nested groups included, one or more per repetition inside it, and one per
 *   rule name it mentions before the grammar defined or mentioned it; the count is `{m,n}`'s n,
 *   else m, else 1.
 * - `{m,n}` with m over 2,000 (an n over 2,000 it reads as no maximum).
 *
 * And limits of this service's own, as the engine parses a grammar on the event loop, recursing
 * once per nested group: groups nested at most GROUP_DEPTH_LIMIT deep, at most RULE_LIMIT rules
 * (10,000 rules parse in about 100 ms) and TEXT_LIMIT characters in all.
 */
import { GrammarCompileError } from './schema-reading.js';

const MAX_REPETITION_THRESHOLD = 2000;
export const GROUP_DEPTH_LIMIT = 64;
export const RULE_LIMIT = 10_000;
export const TEXT_LIMIT = 1_000_000;

export interface GrammarRule {
  name: string;
  body: string;
  /** The JSON pointer of the schema the rule was compiled for. */
  path: string;
}

/** Throws a GrammarCompileError naming the first rule's schema that llama.cpp's parser would refuse. */
export function assertParserLimits(rules: readonly GrammarRule[]): void {
  if (rules.length > RULE_LIMIT) {
    throw new GrammarCompileError(rules[RULE_LIMIT]!.path, `its grammar needs more than ${RULE_LIMIT} rules`);
  }
  const parser = new RuleCounter();
  let characters = 0;
  for (const rule of rules) {
    characters += rule.name.length + rule.body.length;
    if (characters > TEXT_LIMIT) {
      throw new GrammarCompileError(rule.path, `its grammar is longer than ${TEXT_LIMIT} characters`);
    }
    const problem = parser.rule(rule.name, rule.body);
    if (problem) throw new GrammarCompileError(rule.path, problem);
  }
}

/** llama.cpp's rule accounting over one grammar, rule by rule in the order written. */
class RuleCounter {
  /** Rule names defined or mentioned so far: a first mention creates a rule. */
  private readonly seen = new Set<string>();
  private created = 0;

  /** Why the parser refuses this rule, or undefined. */
  rule(name: string, body: string): string | undefined {
    this.mention(name);
    // Rules created when each open group began, innermost last.
    const groups: number[] = [];
    // Rules the latest item of the innermost sequence created: what a repetition multiplies.
    let itemRules = 1;
    for (let at = 0; at < body.length; at += 1) {
      const character = body[at]!;
      if (character === '"' || character === '[') {
        at = closingOf(body, at, character === '"' ? '"' : ']');
        itemRules = 1;
      } else if (isWordCharacter(body.charCodeAt(at))) {
        let end = at;
        while (isWordCharacter(body.charCodeAt(end + 1))) end += 1;
        this.mention(body.slice(at, end + 1));
        at = end;
        itemRules = 1;
      } else if (character === '.') {
        itemRules = 1;
      } else if (character === '(') {
        if (groups.length >= GROUP_DEPTH_LIMIT) return `its grammar nests groups more than ${GROUP_DEPTH_LIMIT} deep`;
        groups.push(this.created);
        this.created += 1;
      } else if (character === ')') {
        itemRules = Math.max(1, this.created - groups.pop()!);
      } else if (character === '|') {
        itemRules = 1;
      } else if (character === '?' || character === '*' || character === '+') {
        const problem = this.repeat(itemRules, 1, 1);
        if (problem) return problem;
      } else if (character === '{') {
        const close = body.indexOf('}', at);
        const [minimum, maximum] = body
          .slice(at + 1, close)
          .split(',')
          .map((bound) => (bound.trim() === '' ? undefined : Number(bound)));
        if (minimum! > MAX_REPETITION_THRESHOLD) {
          return `its grammar repeats an item at least ${minimum} times, more than the ${MAX_REPETITION_THRESHOLD} llama.cpp's grammar parser accepts`;
        }
        // `{m}` has n = m; `{m,}` and an n past the threshold have none.
        const upper = body.slice(at + 1, close).includes(',') ? maximum : minimum;
        const bounded = upper !== undefined && upper <= MAX_REPETITION_THRESHOLD;
        const count = bounded && upper > 0 ? upper : minimum! > 0 ? minimum! : 1;
        const problem = this.repeat(itemRules, count, bounded ? upper - minimum! : 1);
        if (problem) return problem;
        // As llama.cpp counts it: repeating the repeated item again multiplies.
        itemRules *= count;
        at = close;
      }
    }
    return undefined;
  }

  /** A repetition `count` times of an item that created `itemRules` rules; it creates `made` more. */
  private repeat(itemRules: number, count: number, made: number): string | undefined {
    if (itemRules * count > MAX_REPETITION_THRESHOLD) {
      return `its grammar repeats a part of ${itemRules} rules ${count === 1 ? '' : `${count} times `}(more than the ${MAX_REPETITION_THRESHOLD} rules llama.cpp's grammar parser accepts in one repeated part)`;
    }
    this.created += made;
    return undefined;
  }

  private mention(name: string): void {
    if (this.seen.has(name)) return;
    this.seen.add(name);
    this.created += 1;
  }
}

/** llama.cpp's is_word_char: a letter, a digit or `-`. NaN (past the end) is none. */
function isWordCharacter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45;
}

/** Where the literal or class that opens at `start` closes; a backslash escapes the character after it. */
function closingOf(body: string, start: number, closing: string): number {
  let at = start + 1;
  while (at < body.length && body[at] !== closing) at += body[at] === '\\' ? 2 : 1;
  return at;
}
