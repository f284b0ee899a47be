// A SentencePiece-style ("llama") vocabulary shaped like a real one: special tokens, the 256 byte
// fallback tokens llama.cpp requires, ChatML control tokens, then normal pieces with "▁" marking a
// preceding space. Scores descend with the index, so earlier (more common) pieces win SPM merges.

/** SentencePiece's visible space, U+2581. */
export const SPACE_MARK = '\u2581';

/** llama.cpp's token types (enum llama_token_type in llama.h). */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

export const UNKNOWN_TOKEN = '<unk>';
export const BEGIN_TOKEN = '<s>';
export const END_TOKEN = '</s>';
export const CHAT_START_TOKEN = '<|im_start|>';
export const CHAT_END_TOKEN = '<|im_end|>';

export interface Vocabulary {
  tokens: string[];
  types: number[];
  scores: Float32Array;
}

const COMMON_WORDS = (
  'the a an and or not of to in on at by for from with as is are was were be been it its this that ' +
  'these those i you he she we they me him her us them my your our their what which who when where why how ' +
  'yes no ok hello hi world user assistant system model message content role text test time one two three ' +
  'say said answer question please thank thanks good new first last all some any can will would should could ' +
  'do does did have has had make made get got go went see know think want use used like just only also very ' +
  'true false null name type value id number string list item data result error json'
).split(' ');

// Pieces a model emitting JSON sees constantly; the single characters themselves are already present.
const JSON_PIECES = [
  '{"',
  '":',
  '",',
  '"}',
  '":"',
  '","',
  '"},',
  '{}',
  '[]',
  '[{',
  '}]',
  '},{',
  'true',
  'false',
  'null',
  `${SPACE_MARK}{`,
  `${SPACE_MARK}"`,
];

function printableAsciiPieces(): string[] {
  // Space itself is left out: SentencePiece turns spaces into "▁" before looking pieces up.
  const pieces: string[] = [];
  for (let code = 0x21; code <= 0x7e; code++) pieces.push(String.fromCharCode(code));
  return pieces;
}

function twoDigitNumbers(): string[] {
  return Array.from({ length: 100 }, (_, value) => String(value).padStart(2, '0'));
}

/** A piece and, before it, every longer-than-one-character prefix, so SPM's pairwise merges can reach it. */
function withMergePrefixes(piece: string): string[] {
  const characters = Array.from(piece);
  return characters.slice(1).map((_, index) => characters.slice(0, index + 2).join(''));
}

function normalPieces(): string[] {
  const words = COMMON_WORDS.map((word) => `${SPACE_MARK}${word}`);
  return [
    ...printableAsciiPieces(),
    SPACE_MARK,
    ...[...words, ...JSON_PIECES, ...twoDigitNumbers()].flatMap(withMergePrefixes),
  ];
}

/** Endless letter pieces, shortest first, each plain then "▁"-prefixed, so each one's prefixes come earlier. */
function* generatedPieces(): Generator<string> {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  let previousLength: string[] = [''];
  for (;;) {
    const current = previousLength.flatMap((prefix) => Array.from(letters, (letter) => prefix + letter));
    for (const piece of current) {
      yield piece;
      yield `${SPACE_MARK}${piece}`;
    }
    previousLength = current;
  }
}

function addUnique(vocabulary: Vocabulary, seen: Set<string>, token: string, type: number): boolean {
  if (seen.has(token)) return false;
  seen.add(token);
  vocabulary.tokens.push(token);
  vocabulary.types.push(type);
  return true;
}

function addExtraWords(vocabulary: Vocabulary, seen: Set<string>, extraWords: number): void {
  let added = 0;
  for (const piece of generatedPieces()) {
    if (added >= extraWords) return;
    if (addUnique(vocabulary, seen, piece, TOKEN_TYPE.normal)) added++;
  }
}

/** A text as a vocabulary piece: SentencePiece writes a space as "▁". */
export function pieceOf(text: string): string {
  return text.replaceAll(' ', SPACE_MARK);
}

/**
 * The vocabulary: fixed pieces, `extraWords` generated ones, then any extra control tokens, then
 * whole-phrase pieces (a scripted model's, scripted-weights.ts) not already in it.
 */
export function buildVocabulary(
  extraWords: number,
  specialTokens: readonly string[] = [],
  phrases: readonly string[] = [],
): Vocabulary {
  const vocabulary: Vocabulary = { tokens: [], types: [], scores: new Float32Array(0) };
  const seen = new Set<string>();
  addUnique(vocabulary, seen, UNKNOWN_TOKEN, TOKEN_TYPE.unknown);
  addUnique(vocabulary, seen, BEGIN_TOKEN, TOKEN_TYPE.control);
  addUnique(vocabulary, seen, END_TOKEN, TOKEN_TYPE.control);
  for (let byte = 0; byte < 256; byte++) {
    addUnique(vocabulary, seen, `<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, TOKEN_TYPE.byte);
  }
  addUnique(vocabulary, seen, CHAT_START_TOKEN, TOKEN_TYPE.control);
  addUnique(vocabulary, seen, CHAT_END_TOKEN, TOKEN_TYPE.control);
  for (const piece of normalPieces()) addUnique(vocabulary, seen, piece, TOKEN_TYPE.normal);
  addExtraWords(vocabulary, seen, extraWords);
  for (const token of specialTokens) addUnique(vocabulary, seen, token, TOKEN_TYPE.control);
  for (const phrase of phrases) addUnique(vocabulary, seen, pieceOf(phrase), TOKEN_TYPE.normal);
  vocabulary.scores = Float32Array.from(vocabulary.tokens, (_, index) => -index);
  return vocabulary;
}

/** Number of tokens with no generated extras. */
export const BASE_VOCABULARY_SIZE = buildVocabulary(0).tokens.length;
