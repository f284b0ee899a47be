/**
 * Code execution with another runner plugged in (`buildApp`'s `toolProviders.codeRunner`, as a
 * container or microVM runner would be): the service uses it through HTTP, hands it the
 * request's host functions, answers its calls to web_fetch through the loop, fits its output to
 * the turn's context budget, and closes it when the service closes. No Python here: the runner
 * is a fake that records what it was given.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedModels, startService, type RunningService } from '@model-messages/testing';
import { askWithTools, CODE_TOOL, executionResult, type CodeReply } from './code-execution-support.js';
import type { CodeRunner, RunOptions, RunOutcome } from '../packages/server/src/tools/code-execution/code-runner.js';

const TIMINGS = { waitMs: 0, warm: true, runMs: 0 };

/** Answers by the program's first line: `print`, `flood`, `fetch <url>`, `busy` or `loop`. */
class FakeRunner implements CodeRunner {
  readonly programs: string[] = [];
  readonly hostFunctionNames: string[][] = [];
  closed = false;

  async run(code: string, options: RunOptions): Promise<RunOutcome> {
    this.programs.push(code);
    this.hostFunctionNames.push(options.hostFunctions.map((entry) => entry.name));
    const [command = '', argument = ''] = code.split(' ');
    switch (command) {
      case 'print':
        return { kind: 'exited', returnCode: 0, stdout: `${argument}\n`, stderr: '', timings: TIMINGS };
      case 'flood':
        return { kind: 'exited', returnCode: 0, stdout: 'x'.repeat(100_000), stderr: '', timings: TIMINGS };
      case 'fetch': {
        const result = (await options.callHost('web_fetch', { url: argument })) as {
          content?: { source?: { data?: string } };
        };
        return {
          kind: 'exited',
          returnCode: 0,
          stdout: `${result.content?.source?.data ?? ''}\n`,
          stderr: '',
          timings: TIMINGS,
        };
      }
      case 'busy':
        return { kind: 'busy' };
      default:
        return { kind: 'killed', reason: 'time_limit', stdout: '', stderr: '', timings: TIMINGS };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

const FETCH_TOOL = { type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 3 };

let runner: FakeRunner;
let service: RunningService;
let pages: Server;
let origin: string;

function writeScript(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mms-runner-')), 'script.json');
  const run = (code: string) => [
    [{ type: 'server_tool_use', name: 'code_execution', input: { code } }],
    [{ type: 'text', text: 'Done.' }],
  ];
  const entries = [
    { when: '^print$', steps: run('print 42') },
    { when: '^flood$', steps: run('flood') },
    { when: '^fetch ', steps: run(`fetch ${origin}/notes`) },
    { when: '^busy$', steps: run('busy') },
    { when: '^loop$', steps: run('loop') },
  ];
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

before(async () => {
  pages = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/plain' }).end('notes from the page'),
  );
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  runner = new FakeRunner();
  const config = {
    models: scriptedModels({ script: writeScript() }),
    serverTools: { webFetch: { allowNetworks: ['127.0.0.1/32'] } },
  };
  service = await startService(config, process.cwd(), { toolProviders: { codeRunner: runner } });
});

after(async () => {
  pages.closeAllConnections();
  pages.close();
});

function ask(text: string, tools?: unknown[]): Promise<CodeReply> {
  return askWithTools(service, text, 200, tools);
}

describe('a code runner plugged in through buildApp', () => {
  test("the service runs the model's code on it, and the result block carries what it returned", async () => {
    const reply = await ask('print');
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'code_execution_tool_result', 'text'],
    );
    assert.deepEqual(executionResult(reply), {
      type: 'code_execution_result',
      stdout: '42\n',
      stderr: '',
      return_code: 0,
      content: [],
    });
    assert.equal(runner.programs.at(-1), 'print 42');
  });

  test('it gets the host functions of the request, and its web_fetch call goes through the loop', async () => {
    const reply = await ask(`fetch ${origin}/notes`, [CODE_TOOL, FETCH_TOOL]);
    assert.deepEqual(runner.hostFunctionNames.at(-1), ['web_fetch']);
    assert.equal(executionResult(reply).stdout, 'notes from the page\n');
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
  });

  test('its outcomes map to the public result: busy is too_many_requests, a time limit is execution_time_exceeded', async () => {
    assert.deepEqual(executionResult(await ask('busy')), {
      type: 'code_execution_tool_result_error',
      error_code: 'too_many_requests',
    });
    assert.deepEqual(executionResult(await ask('loop')), {
      type: 'code_execution_tool_result_error',
      error_code: 'execution_time_exceeded',
    });
  });

  test('its output is cut to one share of the input headroom, with a note in stderr', async () => {
    // Window 4096, max_tokens 200, at 4 characters a token; 3 fetches left, and code gets one more share.
    const reply = await ask('flood', [CODE_TOOL, FETCH_TOOL]);
    const share = Math.floor(((4096 - reply.usage.input_tokens - 200) * 4) / 4);
    const result = executionResult(reply);
    assert.equal((result.stdout ?? '').length + (result.stderr ?? '').length, share);
    assert.match(
      result.stderr ?? '',
      new RegExp(`^\\[output cut to ${share} characters, its share of the context window; it had 100000\\]\\n$`),
    );
  });

  test('the service closes it when it closes', async () => {
    assert.equal(runner.closed, false);
    await service.close();
    assert.equal(runner.closed, true);
  });
});
