/**
 * The key of an extra (additionalProperties) member: any string except the declared property
 * names. Without the exclusion a model could write `{"age": 3, "age": "old"}`, which parses to
 * the extra value and breaks the declared property's schema.
 *
 * "Not one of these strings" is regular, so it is built from a trie of the declared names: at each
 * node the key may stop (unless the prefix so far is a declared name), continue into a child, or
 * continue with any other character and then anything. Extra keys are written without escapes
 * (`key-char`), so the raw characters are the key's value and the comparison is exact; keys that
 * need escapes cannot be extra keys, a restriction on the model, never a validity hole.
 *
 * Each trie node with children is a rule of its own, its ways on as top-level alternatives, never
 * a group nested in its parent's: llama.cpp's parser refuses a repeated or optional group that
 * holds more than 2,000 rules (MAX_REPETITION_THRESHOLD, gbnf-limits.ts), which one nested group
 * per character reached at a property name of about 650 characters, or at a hundred names of a
 * dozen characters. Built without recursion, and the names' characters are capped, since the
 * grammar grows with them.
 */
import { gbnfLiteral, plainCharacterClassExcluding } from './gbnf-primitives.js';
import type { RuleRegistry } from './gbnf-rules.js';
import { GrammarCompileError } from './schema-reading.js';

/** Characters of declared names, all told, that an extra key is kept from: one rule per character at most. */
export const EXCLUDED_NAME_CHARACTER_LIMIT = 8192;

interface TrieNode {
  /** The characters read so far spell a declared name. */
  isName: boolean;
  readonly children: Map<string, TrieNode>;
  /** This node's rule, once written. */
  rule?: string;
}

/** Characters an unescaped key can hold; a declared name with others can never collide. */
function isPlainKeyCharacter(character: string): boolean {
  return character !== '"' && character !== '\\' && (character.codePointAt(0) ?? 0) >= 0x20;
}

function buildTrie(names: readonly string[], path: string): TrieNode {
  const root: TrieNode = { isName: false, children: new Map() };
  let characters = 0;
  for (const name of names) {
    const nameCharacters = [...name];
    if (!nameCharacters.every(isPlainKeyCharacter)) continue;
    characters += nameCharacters.length;
    if (characters > EXCLUDED_NAME_CHARACTER_LIMIT) {
      throw new GrammarCompileError(
        path,
        `extra keys (additionalProperties) beside declared names of more than ${EXCLUDED_NAME_CHARACTER_LIMIT} characters in all`,
      );
    }
    let node = root;
    for (const character of nameCharacters) {
      let child = node.children.get(character);
      if (child === undefined) {
        child = { isName: false, children: new Map() };
        node.children.set(character, child);
      }
      node = child;
    }
    node.isName = true;
  }
  return root;
}

/** The trie's nodes with children, each after all of its descendants. */
function innerNodesChildrenFirst(root: TrieNode): TrieNode[] {
  const order: TrieNode[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.children.size === 0) continue;
    order.push(node);
    for (const child of node.children.values()) stack.push(child);
  }
  return order.reverse();
}

/**
 * What may follow once a key reached `node`: nothing, unless the key so far is a declared name;
 * else the node's rule (one character or more), or, for a leaf, which is always a name, at least
 * one more character of any kind.
 */
function rest(node: TrieNode, keyCharacter: string): string {
  if (node.rule === undefined) return `${keyCharacter}+`;
  return node.isName ? node.rule : `${node.rule}?`;
}

/** The name of a rule matching a quoted JSON key that is none of `declaredNames`. */
export function keyExcluding(
  declaredNames: readonly string[],
  registry: RuleRegistry,
  hint: string,
  path: string,
): string {
  const keyCharacter = registry.primitive('key-char');
  const root = buildTrie(declaredNames, path);
  for (const node of innerNodesChildrenFirst(root)) {
    const alternatives = [...node.children].map(
      ([character, child]) => `${gbnfLiteral(character)} ${rest(child, keyCharacter)}`,
    );
    alternatives.push(`${plainCharacterClassExcluding([...node.children.keys()])} ${keyCharacter}*`);
    node.rule = registry.define(`${hint}-extra-key-rest`, alternatives.join(' | '), path);
  }
  const key = root.rule === undefined && !root.isName ? `${keyCharacter}*` : rest(root, keyCharacter);
  return registry.define(`${hint}-extra-key`, `"\\"" ${key} "\\""`, path);
}
