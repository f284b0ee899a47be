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
 */
import { gbnfLiteral, plainCharacterClassExcluding } from './gbnf-primitives.js';
import type { RuleRegistry } from './gbnf-rules.js';

interface TrieNode {
  /** The characters read so far spell a declared name. */
  isName: boolean;
  readonly children: Map<string, TrieNode>;
}

/** Characters an unescaped key can hold; a declared name with others can never collide. */
function isPlainKeyCharacter(character: string): boolean {
  return character !== '"' && character !== '\\' && (character.codePointAt(0) ?? 0) >= 0x20;
}

function buildTrie(names: readonly string[]): TrieNode {
  const root: TrieNode = { isName: false, children: new Map() };
  for (const name of names) {
    const characters = [...name];
    if (!characters.every(isPlainKeyCharacter)) continue;
    let node = root;
    for (const character of characters) {
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

/** A parenthesised GBNF group matching the key characters that may follow this node. */
function nodeExpression(node: TrieNode, keyCharacter: string): string {
  const alternatives = [...node.children].map(
    ([character, child]) => `${gbnfLiteral(character)} ${nodeExpression(child, keyCharacter)}`,
  );
  alternatives.push(`${plainCharacterClassExcluding([...node.children.keys()])} ${keyCharacter}*`);
  const group = `(${alternatives.join(' | ')})`;
  // A declared name must not end here, so at least one more character is required.
  return node.isName ? group : `${group}?`;
}

/** The name of a rule matching a quoted JSON key that is none of `declaredNames`. */
export function keyExcluding(declaredNames: readonly string[], registry: RuleRegistry, hint: string): string {
  const keyCharacter = registry.primitive('key-char');
  const body = `"\\"" ${nodeExpression(buildTrie(declaredNames), keyCharacter)} "\\""`;
  return registry.define(`${hint}-extra-key`, body);
}
