import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LlamaGrammar } from 'node-llama-cpp';
import {
  GBNF_CACHE_BYTES,
  GbnfCache,
  GRAMMAR_CACHE_BYTES,
  GrammarCache,
} from '../src/backends/llama-cpp/grammar-cache.js';

const grammar = Promise.resolve({} as LlamaGrammar);
/** A grammar text of `megabytes` of the cache's estimate: 8 bytes a character. */
const text = (name: string, megabytes: number) => `${name}${'x'.repeat((megabytes * 1024 * 1024) / 8 - name.length)}`;

describe('the compiled grammars kept per runtime', () => {
  test('are bounded in bytes, however many distinct grammars come: the oldest go first', () => {
    const cache = new GrammarCache();
    for (let index = 0; index < 100; index += 1) cache.set(text(`g${index} `, 3), grammar);
    assert.ok(cache.heldBytes <= GRAMMAR_CACHE_BYTES, String(cache.heldBytes));
    assert.equal(cache.get(text('g0 ', 3)), undefined);
    assert.equal(cache.get(text('g99 ', 3)), grammar);
  });

  test('many small grammars are all kept while they fit', () => {
    const cache = new GrammarCache();
    for (let index = 0; index < 1000; index += 1) cache.set(`root ::= "${index}"`, grammar);
    assert.equal(cache.get('root ::= "0"'), grammar);
  });

  test('a grammar larger than the whole budget is not kept, and evicts nothing', () => {
    const cache = new GrammarCache();
    cache.set('root ::= "kept"', grammar);
    cache.set(text('huge ', 40), grammar);
    assert.equal(cache.get(text('huge ', 40)), undefined);
    assert.equal(cache.get('root ::= "kept"'), grammar);
  });
});

describe("schemas' grammar texts, kept across runtimes", () => {
  test('are bounded in bytes, the oldest first, and a key set twice is counted once', () => {
    const cache = new GbnfCache();
    const text = 'x'.repeat(1024 * 1024);
    for (let index = 0; index < 40; index += 1) cache.set(`schema ${index}`, { text, exact: true });
    assert.ok(cache.heldBytes <= GBNF_CACHE_BYTES, String(cache.heldBytes));
    assert.equal(cache.get('schema 0'), undefined);
    assert.equal(cache.get('schema 39')?.text, text);
    const held = cache.heldBytes;
    cache.set('schema 39', { text, exact: true });
    assert.equal(cache.heldBytes, held);
  });
});
