/**
 * What the Claude Code CLI is asked in the suite (test/claude-code-cli.test.ts) and in
 * `npm run check:claude-code` (issue 34), and the scripted model that answers it: a plain prompt,
 * a Write round trip, and a web search, which the CLI's WebSearch tool runs as a request of its
 * own with the `web_search_20250305` server tool, answered here by mms's search provider over
 * the test documents (search-documents.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClaudeCodeRun } from './claude-code-cli.js';

/** Where the documents folder's results say they live. */
export const SEARCH_URL_BASE = 'https://docs.example.org/';

export interface ClaudeCodeScenario {
  /** Also the name of the fixture its recorded request is kept as. */
  name: string;
  prompt: string;
  args: string[];
  /**
   * The fixture each of its `POST /v1/messages` requests is recorded as (fixtures/claude-code/),
   * in the order the CLI sends them; undefined: not kept.
   */
  fixtures: ReadonlyArray<string | undefined>;
  /** On the scripted backend: what is wrong with the run, or undefined when it did what was asked. */
  problem(run: ClaudeCodeRun, workFolder: string): string | undefined;
}

export const CLAUDE_CODE_SCENARIOS: readonly ClaudeCodeScenario[] = [
  {
    name: 'plain-prompt',
    prompt: 'Say hello',
    args: [],
    fixtures: ['plain-prompt'],
    // The scripted model's default answer echoes the last user text.
    problem: (run) => (/Say hello/.test(run.stdout) ? undefined : 'the answer does not echo the prompt'),
  },
  {
    name: 'write',
    prompt: "Create the file hello.txt containing 'hi there'",
    args: ['--permission-mode', 'acceptEdits'],
    fixtures: ['write-request', 'write-tool-result'],
    problem: (run, workFolder) => {
      const file = join(workFolder, 'hello.txt');
      if (!existsSync(file) || readFileSync(file, 'utf8') !== 'hi there\n') return 'hello.txt was not written';
      return /Wrote hello\.txt\./.test(run.stdout) ? undefined : 'the answer after the tool round trip is not shown';
    },
  },
  {
    name: 'web-search',
    prompt: 'Search the web for sea otters',
    args: ['--allowedTools', 'WebSearch'],
    // The conversation's first request, WebSearch's own, and the conversation's second.
    fixtures: [undefined, 'web-search', undefined],
    // The CLI's tool result lists the results' titles and URLs; the scripted model echoes it.
    problem: (run) =>
      run.stdout.includes(`${SEARCH_URL_BASE}otters.md`) && /Sea otters/.test(run.stdout)
        ? undefined
        : 'the answer names no search result',
  },
];

/** The scripted model's script for the scenarios; `workFolder` is where the CLI runs. */
export function claudeCodeScript(workFolder: string): unknown[] {
  return [
    {
      when: 'hello\\.txt',
      steps: [
        [
          { type: 'thinking', thinking: 'The user wants one file written.' },
          { type: 'text', text: 'Writing the file.' },
          {
            type: 'tool_use',
            name: 'Write',
            input: { file_path: join(workFolder, 'hello.txt'), content: 'hi there\n' },
          },
        ],
        [{ type: 'text', text: 'Wrote hello.txt.' }],
      ],
    },
    // The CLI's conversation: the model calls its WebSearch tool; the step after the result, not
    // scripted, echoes the tool's result (the titles and URLs found).
    {
      when: 'Search the web for sea otters',
      steps: [[{ type: 'tool_use', name: 'WebSearch', input: { query: 'sea otters' } }]],
    },
    // WebSearch's own request ("Perform a web search for the query: ..."): mms searches.
    {
      when: 'Perform a web search for the query',
      steps: [
        [{ type: 'server_tool_use', name: 'web_search', input: { query: 'sea otters' } }],
        [{ type: 'text', text: 'Sea otters hold hands while they sleep.' }],
      ],
    },
  ];
}
