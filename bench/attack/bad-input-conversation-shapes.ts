/**
 * The bad-input fuzz's conversation shapes (issue 31): well-formed blocks of every type the
 * request schema takes (conversation-blocks.ts), in turns where they may or may not stand. The
 * body and wire families break a valid request's values and bytes, and never move a block into
 * a turn of the other role; an attacker's fuzz did, and a `server_tool_use` in a user turn was a
 * 500 on both routes. After the wire families in the seeded pick's order (bad-input-generator.ts):
 *
 * - block in a role: a valid conversation (SKELETONS) with one block of any type put in a user,
 *   assistant or system message, the first, a middle or the last one (or a new message there),
 *   as its first or last block;
 * - turn shape: the shapes a conversation with tools takes, right or wrong (TURN_SHAPES): paused
 *   turns (genuine, forged, without tools, in the middle), calls without results, results without
 *   calls, a call and its result apart, a result of another tool, runs of one role;
 * - random turns: 1 to 5 messages of any role, each of 0 to 4 blocks, mostly of the types its
 *   role writes, their ids drawn from two of each kind.
 *
 * Every block is signed as the service signs it (but for a forged tenth), the model is `mid`, and
 * tools are offered or not; a server tool is never forced, so that no shape starts a sandbox or a
 * fetch. The rest of the request is the picked valid request's.
 */
import { SERVER_TOOL_TYPES, type ContentBlockParam, type MessageParam } from '@model-messages/protocol';
import { defaultDraft, type Draft, type Family } from './bad-input-draft.js';
import {
  BLOCK_TYPES,
  LOOKUP_TOOL,
  makeBlock,
  RESULT_TYPES,
  SERVER_TOOLS,
  serverCall,
  serverResult,
  signed,
  type BlockIds,
  type BlockType,
  type ServerToolName,
} from './conversation-blocks.js';
import type { SeededRandom } from './seeded-random.js';
import type { ValidRequest } from './valid-requests.js';

type Role = 'user' | 'assistant' | 'system';

interface Message {
  role: Role;
  content: string | ContentBlockParam[];
  clear_at?: 'next_user_message';
}

interface Shape {
  messages: Message[];
  /** The custom tool and the three server tools offered, or no tools. */
  tools: boolean;
  /** Sent unsigned: ids and signatures no service made. */
  forged?: boolean;
}

const OFFERED_TOOLS = [
  LOOKUP_TOOL,
  { type: SERVER_TOOL_TYPES.webSearch, name: 'web_search' },
  { type: SERVER_TOOL_TYPES.webFetch, name: 'web_fetch' },
  { type: SERVER_TOOL_TYPES.codeExecution, name: 'code_execution' },
  // Tool search (issue 34): its results name `lookup`, which it may load.
  { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
  { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
];

/** Never a server tool: a forced one would start a sandbox or a fetch. */
const TOOL_CHOICES = [undefined, { type: 'auto' }, { type: 'none' }, { type: 'any' }, { type: 'tool', name: 'lookup' }];

/** The block types each side writes in the public API: the caller's turns and the model's. */
const TURN_TYPES: Record<'user' | 'assistant', readonly BlockType[]> = {
  user: ['text', 'image', 'document', 'tool_result'],
  assistant: [
    'text',
    'thinking',
    'redacted_thinking',
    'tool_use',
    'server_tool_use',
    'web_search_tool_result',
    'web_fetch_tool_result',
    'code_execution_tool_result',
    'tool_search_tool_result',
    'compaction',
  ],
};

const user = (content: Message['content']): Message => ({ role: 'user', content });
const assistant = (content: Message['content']): Message => ({ role: 'assistant', content });
const system = (content: string): Message => ({ role: 'system', content });
const text = (words: string): ContentBlockParam => ({ type: 'text', text: words });

function shapeDraft(random: SeededRandom, base: ValidRequest, shape: Shape): Draft {
  // Each message signed after the ones before it as sent, as the service binds a paused turn to
  // the conversation before it.
  const messages: Message[] = [];
  for (const message of shape.messages) {
    const sent =
      shape.forged || typeof message.content === 'string'
        ? message
        : { ...message, content: signed(random, message.content, messages as MessageParam[]) };
    messages.push(sent);
  }
  const body: Record<string, unknown> = { ...base.body, messages };
  delete body.tool_choice;
  if (shape.tools) {
    body.tools = OFFERED_TOOLS;
    const choice = random.pick(TOOL_CHOICES);
    if (choice !== undefined) body.tool_choice = choice;
  } else delete body.tools;
  return defaultDraft(base, JSON.stringify(body));
}

function freshIds(random: SeededRandom): BlockIds {
  return {
    toolUse: random.pick(['toolu_01', 'toolu_01', 'toolu_02']),
    serverCall: random.pick(['srvtoolu_01', 'srvtoolu_01', 'srvtoolu_02']),
    serverTool: random.pick(SERVER_TOOLS),
  };
}

/** A server tool's call and its result, as a turn holds them. */
function callAndResult(random: SeededRandom, tool: ServerToolName, id: string): ContentBlockParam[] {
  return [serverCall(tool, id), serverResult(random, RESULT_TYPES[tool], id)];
}

/** Valid conversations, each with the blocks a planted one may pair with (the same ids). */
const SKELETONS: Record<string, (random: SeededRandom, ids: BlockIds) => Shape> = {
  'a question': () => ({ messages: [user('What do otters eat?')], tools: false }),
  'an exchange': () => ({ messages: [user('Hi.'), assistant('Hello.'), user([text('Otters?')])], tools: false }),
  'a tool round trip': (random, ids) => ({
    messages: [
      user('Look up otter.'),
      assistant([text('Looking.'), makeBlock(random, 'tool_use', ids)]),
      user([makeBlock(random, 'tool_result', ids)]),
    ],
    tools: true,
  }),
  'a server call, then a question': (random, ids) => ({
    messages: [
      user('Search otters.'),
      assistant([...callAndResult(random, ids.serverTool, ids.serverCall), text('Found.')]),
      user('And then?'),
    ],
    tools: random.chance(0.5),
  }),
  'a paused turn': (random, ids) => ({
    messages: [
      user('Search otters.'),
      assistant([text('Searching.'), ...callAndResult(random, ids.serverTool, ids.serverCall)]),
    ],
    tools: true,
  }),
  'a system note between turns': () => ({
    messages: [user('Hi.'), system('Be brief.'), assistant('Hello.'), user('Otters?')],
    tools: false,
  }),
  'a thinking turn': (random, ids) => ({
    messages: [user('Think.'), assistant([makeBlock(random, 'thinking', ids), text('Done.')]), user('Again.')],
    tools: false,
  }),
  // Issue 34: a conversation compacted by an earlier reply, which starts from its block.
  'a compacted conversation': (random, ids) => ({
    messages: [
      user('Look up otter.'),
      assistant([makeBlock(random, 'tool_use', ids)]),
      user([makeBlock(random, 'tool_result', ids)]),
      assistant([makeBlock(random, 'compaction', ids), text('Going on.')]),
      user('And now?'),
    ],
    tools: random.chance(0.5),
  }),
};

type Where = 'first' | 'middle' | 'last';

/** Puts one block of any type in a message of any role; answers where, for the report. */
function plant(random: SeededRandom, shape: Shape, ids: BlockIds): string {
  const type = random.pick(BLOCK_TYPES);
  const block = makeBlock(random, type, ids);
  const role = random.pick<Role>(['user', 'assistant', 'system']);
  const where = random.pick<Where>(['first', 'middle', 'last']);
  const ofRole = shape.messages.flatMap((message, index) => (message.role === role ? [index] : []));
  const existing = ofRole.length > 0 && random.chance(0.5);
  let index: number;
  if (existing) index = ofRole[{ first: 0, middle: Math.floor(ofRole.length / 2), last: ofRole.length - 1 }[where]]!;
  else {
    index = { first: 0, middle: Math.floor(shape.messages.length / 2), last: shape.messages.length }[where];
    shape.messages.splice(index, 0, { role, content: [] });
  }
  const message = shape.messages[index]!;
  const blocks = typeof message.content === 'string' ? [text(message.content)] : message.content;
  const first = random.chance(0.5);
  message.content = first ? [block, ...blocks] : [...blocks, block];
  const named = type === 'server_tool_use' ? `${type} (${ids.serverTool})` : type;
  return `${named} as the ${first ? 'first' : 'last'} block of ${existing ? 'the' : 'a new'} ${where} ${role} message`;
}

/** Conversations with tools, right and wrong; each draws its details (tool, ids, words) from the seed. */
const TURN_SHAPES: Record<string, (random: SeededRandom, ids: BlockIds) => Shape> = {
  'a paused turn': (random, ids) => ({
    messages: [
      user('Search otters.'),
      assistant([
        makeBlock(random, 'thinking', ids),
        text('Searching.'),
        ...callAndResult(random, ids.serverTool, 'a'),
      ]),
    ],
    tools: true,
  }),
  'a paused turn resumed twice': (random) => ({
    messages: [
      user('Search otters.'),
      assistant([
        ...callAndResult(random, random.pick(SERVER_TOOLS), 'a'),
        text('More.'),
        ...callAndResult(random, random.pick(SERVER_TOOLS), 'b'),
      ]),
    ],
    tools: true,
  }),
  'a paused turn, forged': (random, ids) => ({
    messages: [
      user('Search otters.'),
      assistant([text('I am told to.'), ...callAndResult(random, ids.serverTool, 'srvtoolu_01')]),
    ],
    tools: true,
    forged: true,
  }),
  'a paused turn without tools': (random, ids) => ({
    messages: [user('Search otters.'), assistant(callAndResult(random, ids.serverTool, 'a'))],
    tools: false,
  }),
  'a paused turn, then a user turn': (random, ids) => ({
    messages: [user('Search otters.'), assistant(callAndResult(random, ids.serverTool, 'a')), user('Go on.')],
    tools: random.chance(0.5),
  }),
  'a server call without its result, last': (random, ids) => ({
    messages: [user('Search otters.'), assistant([text('Searching.'), serverCall(ids.serverTool, 'a')])],
    tools: random.chance(0.5),
  }),
  'a server result without its call': (random, ids) => ({
    messages: [
      user('Search otters.'),
      assistant([serverResult(random, RESULT_TYPES[ids.serverTool], 'a'), text('Found.')]),
      user('Go on.'),
    ],
    tools: random.chance(0.5),
  }),
  'a server result before its call': (random, ids) => ({
    messages: [user('Search otters.'), assistant(callAndResult(random, ids.serverTool, 'a').reverse()), user('Go on.')],
    tools: random.chance(0.5),
  }),
  'a server call and its result in two assistant messages': (random, ids) => {
    const [call, result] = callAndResult(random, ids.serverTool, 'a');
    return {
      messages: [user('Search otters.'), assistant([call!]), assistant([result!]), user('Go on.')],
      tools: true,
    };
  },
  'a server result of another tool': (random) => {
    const [called, answered] = [random.pick(SERVER_TOOLS), random.pick(SERVER_TOOLS)];
    return {
      messages: [
        user('Search otters.'),
        assistant([serverCall(called, 'a'), serverResult(random, RESULT_TYPES[answered], 'a')]),
      ],
      tools: true,
    };
  },
  'a server call answered by a tool_result': (random, ids) => ({
    messages: [
      user('Search otters.'),
      assistant([serverCall(ids.serverTool, 'a')]),
      user([{ type: 'tool_result', tool_use_id: 'a', content: 'Found.' }]),
    ],
    tools: true,
  }),
  'a tool_use without its result': (random, ids) => ({
    messages: [user('Look up otter.'), assistant([makeBlock(random, 'tool_use', ids)]), user('Go on.')],
    tools: true,
  }),
  'a tool_use as the last turn': (random, ids) => ({
    messages: [user('Look up otter.'), assistant([text('Looking.'), makeBlock(random, 'tool_use', ids)])],
    tools: random.chance(0.5),
  }),
  'a tool_result without its use': (random, ids) => ({
    messages: [user('Hi.'), assistant('Hello.'), user([makeBlock(random, 'tool_result', ids)])],
    tools: true,
  }),
  'a tool_result in the first message': (random, ids) => ({
    messages: [user([makeBlock(random, 'tool_result', ids), text('Go on.')])],
    tools: true,
  }),
  'a system message between a tool_use and its result': (random, ids) => ({
    messages: [
      user('Look up otter.'),
      assistant([makeBlock(random, 'tool_use', ids)]),
      { ...system('Answer briefly.'), ...(random.chance(0.5) ? { clear_at: 'next_user_message' as const } : {}) },
      user([makeBlock(random, 'tool_result', ids)]),
    ],
    tools: true,
  }),
  'one tool_use id used twice': (random, ids) => {
    const call = makeBlock(random, 'tool_use', ids);
    const result = makeBlock(random, 'tool_result', ids);
    return {
      messages: [user('Look up.'), assistant([call]), user([result]), assistant([call]), user([result])],
      tools: true,
    };
  },
  'turns of one role in a row': (random, ids) => ({
    messages: [
      user('Hi.'),
      user([text('Otters?')]),
      assistant('Hello.'),
      assistant([makeBlock(random, 'thinking', ids)]),
      user('Go on.'),
    ],
    tools: random.chance(0.5),
  }),
  'an assistant turn first': (random, ids) => ({
    messages: [assistant([...callAndResult(random, ids.serverTool, 'a'), text('Found.')]), user('Go on.')],
    tools: random.chance(0.5),
  }),
  'empty turns': () => ({ messages: [user([]), assistant([]), user('Otters?')], tools: false }),
  'only thinking': (random, ids) => ({
    messages: [
      user('Think.'),
      assistant([makeBlock(random, random.pick<BlockType>(['thinking', 'redacted_thinking']), ids)]),
    ],
    tools: random.chance(0.5),
  }),
  'only system messages': () => ({ messages: [system('Be brief.'), system('Be kind.')], tools: false }),
  "every block of each side's turns": (random, ids) => ({
    messages: [
      user(TURN_TYPES.user.filter((type) => type !== 'tool_result').map((type) => makeBlock(random, type, ids))),
      assistant([
        makeBlock(random, 'thinking', ids),
        makeBlock(random, 'redacted_thinking', ids),
        text('Looking.'),
        ...SERVER_TOOLS.flatMap((tool, position) => callAndResult(random, tool, `s${position}`)),
        makeBlock(random, 'tool_use', ids),
      ]),
      user([makeBlock(random, 'tool_result', ids), text('Go on.')]),
    ],
    tools: true,
  }),
};

/** 1 to 5 messages, roles mostly taking turns, blocks mostly of their role's types, few ids. */
function randomTurns(random: SeededRandom): { shape: Shape; summary: string } {
  const messages: Message[] = [];
  for (let index = 0, count = 1 + random.below(5); index < count; index += 1) {
    const role: Role = random.chance(0.1)
      ? 'system'
      : random.chance(0.8)
        ? index % 2 === 0
          ? 'user'
          : 'assistant'
        : random.pick<Role>(['user', 'assistant']);
    if (role === 'system' && random.chance(0.8)) {
      messages.push(system('A note.'));
      continue;
    }
    const blocks: ContentBlockParam[] = [];
    for (let block = 0, length = random.below(5); block < length; block += 1) {
      const types = role === 'system' || random.chance(0.25) ? BLOCK_TYPES : TURN_TYPES[role];
      const ids = freshIds(random);
      blocks.push(makeBlock(random, random.pick(types), ids));
      // A server call is answered in its turn, most of the time.
      const last = blocks.at(-1)!;
      if (last.type === 'server_tool_use' && random.chance(0.7))
        blocks.push(serverResult(random, RESULT_TYPES[ids.serverTool], last.id));
    }
    messages.push({ role, content: random.chance(0.15) ? 'Otters?' : blocks });
  }
  const summary = messages
    .map((message) =>
      typeof message.content === 'string'
        ? `${message.role}(string)`
        : `${message.role}[${message.content.map((block) => block.type).join(',')}]`,
    )
    .join(' ');
  return { shape: { messages, tools: random.chance(0.7), forged: random.chance(0.1) }, summary };
}

export const CONVERSATION_FAMILIES: Family[] = [
  {
    name: 'block in a role',
    weight: 8,
    mutate: (random, base) => {
      const skeleton = random.pick(Object.keys(SKELETONS));
      const ids = freshIds(random);
      const shape = SKELETONS[skeleton]!(random, ids);
      shape.forged = random.chance(0.1);
      const where = plant(random, shape, ids);
      return {
        mutation: `block in a role: ${skeleton}, ${where}${shape.forged ? ', unsigned' : ''}`,
        draft: shapeDraft(random, base, shape),
      };
    },
  },
  {
    name: 'turn shape',
    weight: 6,
    mutate: (random, base) => {
      const name = random.pick(Object.keys(TURN_SHAPES));
      const shape = TURN_SHAPES[name]!(random, freshIds(random));
      return {
        mutation: `turn shape: ${name}${shape.tools ? ', tools offered' : ''}`,
        draft: shapeDraft(random, base, shape),
      };
    },
  },
  {
    name: 'random turns',
    weight: 6,
    mutate: (random, base) => {
      const { shape, summary } = randomTurns(random);
      return {
        mutation: `random turns: ${summary}${shape.tools ? ', tools offered' : ''}${shape.forged ? ', unsigned' : ''}`,
        draft: shapeDraft(random, base, shape),
      };
    },
  },
];
