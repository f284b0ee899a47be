/**
 * Blocks of every type the request schema takes in a turn (protocol's `contentBlockParam`), with
 * contents as the service and its clients write them, for the bad-input fuzz's conversation
 * shapes (bad-input-conversation-shapes.ts, issue 31). Signed with the fuzz service's key where
 * the service checks a signature (thinking, server call ids, search content), so that a shape
 * gets as far into the service as its turns let it: a signed thinking block in a user turn
 * passed every check before the prompt was built. A call id's nonce comes from the seeded
 * random, so that request N of a seed is the same bytes on every run.
 */
import { SERVER_TOOL_NAMES, type ContentBlockParam, type MessageParam } from '@model-messages/protocol';
import { encodeSearchContent, Signer } from '@model-messages/server';
import { signedTurn } from '@model-messages/testing';
import type { SeededRandom } from './seeded-random.js';
import { PDF_BASE64, PNG_BASE64 } from './valid-requests.js';

/** The fuzz service's `signingKey` (bad-input-fuzz.ts), so that the blocks signed here verify there. */
export const FUZZ_SIGNING_KEY = 'bad-input-fuzz-signing-key-0123456789';
const signer = new Signer(Buffer.from(FUZZ_SIGNING_KEY, 'utf8'));

export type BlockType = ContentBlockParam['type'];
export type ServerToolName = (typeof SERVER_TOOL_NAMES)[keyof typeof SERVER_TOOL_NAMES];
type ServerResultType =
  'web_search_tool_result' | 'web_fetch_tool_result' | 'code_execution_tool_result' | 'tool_search_tool_result';

export const SERVER_TOOLS: readonly ServerToolName[] = Object.values(SERVER_TOOL_NAMES);

/** The result block each server tool's call is answered with. */
export const RESULT_TYPES: Record<ServerToolName, ServerResultType> = {
  web_search: 'web_search_tool_result',
  web_fetch: 'web_fetch_tool_result',
  code_execution: 'code_execution_tool_result',
  tool_search_tool_regex: 'tool_search_tool_result',
  tool_search_tool_bm25: 'tool_search_tool_result',
};

/** The custom tool the shapes' tool_use blocks call, offered with the server tools. */
export const LOOKUP_TOOL = {
  name: 'lookup',
  description: 'Looks a word up.',
  input_schema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
};

/** What a block refers to: the tool_use id a tool_result answers, the server call a result answers. */
export interface BlockIds {
  toolUse: string;
  serverCall: string;
  serverTool: ServerToolName;
}

type Maker = (random: SeededRandom, ids: BlockIds) => ContentBlockParam;

const TEXTS = ['Hello.', 'Look up otters.', '', 'Sunny, 21 C.', 'search the web for "cats"\n\u00e9\ud83d\ude00'];

/**
 * One maker per block type: a Record over the schema's types, so that a block type added to the
 * schema does not compile until the fuzz makes it too.
 */
const MAKERS: Record<BlockType, Maker> = {
  text: (random) => ({ type: 'text', text: random.pick(TEXTS) }),
  image: (random) => ({
    type: 'image',
    source: random.chance(0.7)
      ? { type: 'base64', media_type: 'image/png', data: PNG_BASE64 }
      : { type: 'url', url: 'https://example.com/otter.png' },
  }),
  document: (random) =>
    random.pick<ContentBlockParam>([
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A plain note.' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } },
      { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'A note.' }] }, title: 'Note' },
    ]),
  tool_use: (_random, ids) => ({ type: 'tool_use', id: ids.toolUse, name: LOOKUP_TOOL.name, input: { word: 'otter' } }),
  tool_result: (random, ids) =>
    random.pick<ContentBlockParam>([
      { type: 'tool_result', tool_use_id: ids.toolUse, content: 'Found.' },
      { type: 'tool_result', tool_use_id: ids.toolUse, content: [{ type: 'text', text: 'Found.' }], is_error: false },
      {
        type: 'tool_result',
        tool_use_id: ids.toolUse,
        content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }],
      },
      { type: 'tool_result', tool_use_id: ids.toolUse, content: [{ type: 'tool_reference', tool_name: 'lookup' }] },
      { type: 'tool_result', tool_use_id: ids.toolUse, is_error: true },
    ]),
  // Signed by signedTurn below, unless the shape keeps it forged.
  thinking: (random) => ({ type: 'thinking', thinking: random.pick(['Let me see.', '']), signature: 'forged' }),
  redacted_thinking: () => ({ type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' }),
  server_tool_use: (_random, ids) => serverCall(ids.serverTool, ids.serverCall),
  web_search_tool_result: (random, ids) => serverResult(random, 'web_search_tool_result', ids.serverCall),
  web_fetch_tool_result: (random, ids) => serverResult(random, 'web_fetch_tool_result', ids.serverCall),
  code_execution_tool_result: (random, ids) => serverResult(random, 'code_execution_tool_result', ids.serverCall),
  tool_search_tool_result: (random, ids) => serverResult(random, 'tool_search_tool_result', ids.serverCall),
  // Signed by signedTurn below when it has a summary; a null one is a compaction that failed.
  compaction: (random) =>
    random.pick<ContentBlockParam>([
      { type: 'compaction', content: 'The user asked about otters; they hold hands.', signature: 'forged' },
      { type: 'compaction', content: null },
    ]),
};

export const BLOCK_TYPES = Object.keys(MAKERS) as BlockType[];

export function makeBlock(random: SeededRandom, type: BlockType, ids: BlockIds): ContentBlockParam {
  return MAKERS[type](random, ids);
}

export function serverCall(tool: ServerToolName, id: string): ContentBlockParam {
  const inputs: Record<ServerToolName, Record<string, unknown>> = {
    web_search: { query: 'otters' },
    web_fetch: { url: 'https://example.com/otters' },
    code_execution: { code: 'print(2 + 2)' },
    tool_search_tool_regex: { query: 'look' },
    tool_search_tool_bm25: { query: 'look up a word' },
  };
  return { type: 'server_tool_use', id, name: tool, input: inputs[tool] };
}

/** A result as the tool writes it, or its error (`<type>_error`), a fifth of the time. */
export function serverResult(random: SeededRandom, type: ServerResultType, id: string): ContentBlockParam {
  if (random.chance(0.2))
    return {
      type,
      tool_use_id: id,
      content: { type: `${type}_error`, error_code: 'unavailable' },
    } as ContentBlockParam;
  if (type === 'web_search_tool_result') {
    const url = 'https://example.com/otters';
    const text = 'Otters hold hands while they sleep.';
    const result = { type: 'web_search_result', url, title: 'Otters', encrypted_content: '' };
    // A fifth of the results carry content this service never encoded: they stay unreadable.
    result.encrypted_content = random.chance(0.8) ? encodeSearchContent(signer, url, text) : 'bm90IG91cnM=';
    return { type, tool_use_id: id, content: [result] };
  }
  if (type === 'web_fetch_tool_result')
    return {
      type,
      tool_use_id: id,
      content: {
        type: 'web_fetch_result',
        url: 'https://example.com/otters',
        content: {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: 'Otters.' },
          title: 'Otters',
        },
      },
    };
  if (type === 'tool_search_tool_result')
    return {
      type,
      tool_use_id: id,
      content: {
        type: 'tool_search_tool_search_result',
        tool_references: [{ type: 'tool_reference', tool_name: 'lookup' }],
      },
    };
  return {
    type,
    tool_use_id: id,
    content: { type: 'code_execution_result', stdout: '4\n', stderr: '', return_code: 0, content: [] },
  };
}

/**
 * `blocks` signed as the service signs what it returns after `conversation` (the messages before
 * them, as sent): thinking signed, each server call given an id made for it after the
 * conversation and the blocks before it, over its result (its results following the new id).
 */
export function signed(
  random: SeededRandom,
  blocks: readonly ContentBlockParam[],
  conversation: readonly MessageParam[],
): ContentBlockParam[] {
  const seededBytes = (size: number) => Buffer.from(Array.from({ length: size }, () => random.below(256)));
  return signedTurn(signer, blocks, conversation, [], seededBytes);
}
