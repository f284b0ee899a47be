/**
 * The conversations bench/replica-replay.ts replays (issue 36): Claude Code's shape as its
 * recorded requests show it (packages/testing/fixtures/claude-code/, `claude -p` 2.1.332: a
 * system prompt of 7,152 characters, 12 tools of 31,916, a first user turn of about 10,000 with
 * its reminders), made up deterministically from a seed, so that every policy and every run
 * sends the very same requests. A token is 4 characters here, as the fake engines count them.
 *
 * - Shared by every conversation, as one Claude Code version sends it: a system prompt of about
 *   1,700 tokens and 12 tools of about 660 tokens each.
 * - Per project (10 of them, 5 conversations each): the environment block that ends the system
 *   prompt (working folder, platform, date, git status; about 150 tokens) and the reminders that
 *   open the first user turn (CLAUDE.md and the like, about 2,400 tokens): 12,000 tokens before
 *   the conversation's own first words.
 * - Per conversation: its first prompt (30 to 200 tokens), then 10 to 30 turns, each an
 *   assistant turn of text and one tool call (a read, a search, a command; 20 to 200 tokens) and
 *   the user turn of its result (100 to 3,000 tokens, most of them short: log-uniform), as agent
 *   traffic is: a long prefix that grows slowly.
 * - Its session id, sent as `x-claude-code-session-id` with every request, as Claude Code does.
 */

export interface TraceSettings {
  conversations: number;
  minTurns: number;
  maxTurns: number;
  seed: number;
}

/** One request of a conversation: its body, whose last message is the user turn to answer. */
export interface TraceRequest {
  body: Record<string, unknown>;
}

export interface Conversation {
  index: number;
  sessionId: string;
  /** Its requests in order: turn 1 alone, then each with the turns before it. */
  requests: TraceRequest[];
}

const CHARACTERS_PER_TOKEN = 4;
const PROJECTS = 10;
const TOOL_NAMES = [
  'Read',
  'Write',
  'Edit',
  'Bash',
  'Glob',
  'Grep',
  'Task',
  'TodoWrite',
  'WebFetch',
  'WebSearch',
  'NotebookEdit',
  'AskUserQuestion',
];

/** mulberry32: a small seeded generator, the same numbers on every machine. */
export function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mer', 'tis', 'dun', 've', 'spar', 'og', 'rin', 'tal', 'shu', 'pe', 'wox', 'bel'];

/** About `tokens` tokens of word-like text, drawn from `random`. */
function text(random: () => number, tokens: number): string {
  const words: string[] = [];
  let length = 0;
  while (length < tokens * CHARACTERS_PER_TOKEN) {
    const syllables = 1 + Math.floor(random() * 3);
    let word = '';
    for (let index = 0; index < syllables; index += 1) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)]!;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

function between(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** Log-uniform between `low` and `high`: most tool results are short, a few are whole files. */
function logBetween(random: () => number, low: number, high: number): number {
  return Math.round(Math.exp(Math.log(low) + random() * (Math.log(high) - Math.log(low))));
}

export function conversationTrace(settings: TraceSettings): Conversation[] {
  const shared = randomSource(settings.seed);
  const systemPrompt = text(shared, 1700);
  const tools = TOOL_NAMES.map((name) => ({
    name,
    description: text(shared, 600),
    input_schema: {
      type: 'object',
      properties: {
        target: { type: 'string', description: text(shared, 30) },
        detail: { type: 'string', description: text(shared, 30) },
      },
      required: ['target'],
    },
  }));
  const projects = Array.from({ length: PROJECTS }, (_, project) => ({
    environment: `<env>\nWorking directory: /home/dev/project-${project}\nPlatform: linux\n${text(shared, 140)}\n</env>`,
    reminders: `<system-reminder>\nContents of /home/dev/project-${project}/CLAUDE.md:\n${text(shared, 2400)}\n</system-reminder>`,
  }));
  return Array.from({ length: settings.conversations }, (_, index) => {
    const random = randomSource(settings.seed * 7919 + index + 1);
    const project = projects[index % PROJECTS]!;
    const system = [
      { type: 'text', text: systemPrompt },
      { type: 'text', text: project.environment },
    ];
    const messages: Array<Record<string, unknown>> = [
      {
        role: 'user',
        content: [
          { type: 'text', text: project.reminders },
          { type: 'text', text: `Conversation ${index}: ${text(random, between(random, 30, 200))}` },
        ],
      },
    ];
    const turns = between(random, settings.minTurns, settings.maxTurns);
    const requests: TraceRequest[] = [];
    for (let turn = 1; turn <= turns; turn += 1) {
      requests.push({
        body: { model: 'replay', max_tokens: 4096, stream: true, system, tools, messages: [...messages] },
      });
      const callId = `toolu_${index}_${turn}`;
      messages.push(
        {
          role: 'assistant',
          content: [
            { type: 'text', text: text(random, between(random, 20, 150)) },
            {
              type: 'tool_use',
              id: callId,
              name: TOOL_NAMES[between(random, 0, TOOL_NAMES.length - 1)]!,
              input: { target: text(random, between(random, 5, 60)) },
            },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: callId, content: text(random, logBetween(random, 100, 3000)) }],
        },
      );
    }
    return { index, sessionId: `replay-session-${settings.seed}-${index}`, requests };
  });
}
