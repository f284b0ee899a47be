/**
 * The body of a llama.cpp tokenizer worker (prompt-tokenizer.ts): the model file's vocabulary
 * alone (`vocabOnly`: no weights), loaded once; prompts in, their tokens out, one at a time. Says
 * `ready` with what the length bound needs: the longest token's text in UTF-8 bytes, and whether
 * the vocabulary's kind makes the bound sound.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getLlama, LlamaText, LlamaVocabularyType, type LlamaTextJSON } from 'node-llama-cpp';

export interface TokenizerRequest {
  id: number;
  text: LlamaTextJSON;
}

export type TokenizerReply =
  | { type: 'ready'; longestTokenBytes: number; boundHolds: boolean }
  /** The tokens' buffer is transferred, not copied: a long prompt's tokens cross once. */
  | { type: 'tokenized'; id: number; tokens: Uint32Array }
  | { type: 'failed'; id: number; message: string };

/**
 * Vocabularies whose tokens together cover every byte of the text, each token at most its own
 * text's length: byte-level BPE, SentencePiece (a space becomes `▁`, three bytes for one) and
 * RWKV's byte trie. WordPiece and Unigram normalise whitespace away, so a text of spaces can be
 * few tokens: no bound from its length holds for them.
 */
const COVERING_VOCABULARIES: ReadonlySet<LlamaVocabularyType> = new Set([
  LlamaVocabularyType.spm,
  LlamaVocabularyType.bpe,
  LlamaVocabularyType.rwkv,
]);

/** An unknown token may stand for one character of up to four bytes, whatever its own text. */
const LONGEST_CHARACTER_BYTES = 4;

const port = parentPort!;
const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' as never });
const model = await llama.loadModel({ modelPath: (workerData as { modelPath: string }).modelPath, vocabOnly: true });
let longestTokenBytes = LONGEST_CHARACTER_BYTES;
for (const token of model.iterateAllTokens()) {
  longestTokenBytes = Math.max(longestTokenBytes, Buffer.byteLength(model.detokenize([token], true)));
}
port.on('message', ({ id, text }: TokenizerRequest) => {
  let tokens: Uint32Array<ArrayBuffer>;
  try {
    tokens = Uint32Array.from(LlamaText.fromJSON(text).tokenize(model.tokenizer));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    port.postMessage({ type: 'failed', id, message } satisfies TokenizerReply);
    return;
  }
  port.postMessage({ type: 'tokenized', id, tokens } satisfies TokenizerReply, [tokens.buffer]);
});
port.postMessage({
  type: 'ready',
  longestTokenBytes,
  boundHolds: COVERING_VOCABULARIES.has(model.vocabularyType),
} satisfies TokenizerReply);
