/**
 * The code execution server tool, run by the service: a sandbox battery (runaway CPU and
 * memory, files outside its folder, the network, the service's environment and processes), all
 * contained with the service still answering; loop tests through the scripted backend; and
 * programmatic tool calling, where code calls web_fetch and only what it prints enters the turn.
 *
 * One service with a warm pool serves every test: each execution gets a fresh sandbox, and the
 * pool loads the next one while a test runs. One waiting sandbox is enough for tests that run
 * one at a time; a second would only be loaded again and again, and thrown away at the end.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  postJson,
  readSse,
  scriptedModels,
  startService,
  TEST_SNAPSHOT_FOLDER,
  type RunningService,
} from '@model-messages/testing';
import { askWithTools, CODE_TOOL, executionResult, type CodeBlock, type CodeReply } from './code-execution-support.js';
import { sandboxPlatform } from '../packages/server/src/tools/code-execution/sandbox-platform.js';

/** Network and PID isolation come from the OS; where it refuses them the service warns, and the tests that need them skip. */
const NO_NAMESPACES =
  (await sandboxPlatform()).namespaces === undefined
    ? 'unshare cannot make network and PID namespaces on this host'
    : false;

/** In this process's environment, which the service (started in this process) inherits. */
const SECRET = 'mms-test-secret-4f9a1c';
process.env.MMS_TEST_SECRET = SECRET;

// The time limits are generous: on a loaded machine Pyodide runs the battery's programs several
// times slower (the memory bomb, which grows wasm memory to 400 MB, took over 4 s inside
// `npm test`), and each must end by itself, not by a limit.
const LIMITS = {
  poolSize: 1,
  timeoutMs: 10_000,
  memoryMb: 400,
  maxOutputBytes: 4_096,
  maxFileBytes: 1 << 20,
  maxFolderBytes: 2 << 20,
  snapshotFolder: TEST_SNAPSHOT_FOLDER,
};
/**
 * The programs that only a limit ends run on a second service with short ones: the infinite loop
 * burns its CPU until the limit (10 s of it under LIMITS), and the slow calls wait out the wall
 * clock. No pool: each of its two executions starts its sandbox, from the same snapshot.
 */
const SHORT_LIMITS = { ...LIMITS, poolSize: 0, timeoutMs: 2_000, wallTimeoutMs: 3_000 };
const PAGE = [
  'Field notes, day 12.',
  'The zebra codeword is PLATYPUS-7731.',
  'Otters hold hands while they sleep.',
  'Nothing else happened.',
].join('\n');

let service: RunningService;
/** The service with SHORT_LIMITS. */
let limited: RunningService;
let scriptFolder: string;
let pages: Server;
let origin: string;
/** A TCP server on the host's loopback: sandboxed code must never reach it. */
let probe: TcpServer;
let probeConnections = 0;

/** Python that tries each escape and prints {name: "allowed: ..." | "refused: ..."} as JSON. */
function attempts(setup: string, checks: Record<string, string>): string {
  const lines = Object.entries(checks).map(
    ([name, expression]) => `await attempt(${JSON.stringify(name)}, lambda: ${expression})`,
  );
  return `import json, js, inspect
results = {}
async def attempt(name, action):
    try:
        value = action()
        if inspect.isawaitable(value):
            value = await value
        results[name] = "allowed: " + str(value)[:200]
    except BaseException as error:
        results[name] = "refused: " + type(error).__name__ + ": " + str(error)[:200]
${setup}
${lines.join('\n')}
print(json.dumps(results))`;
}

function programs(): Record<string, string> {
  const repoPackageJson = resolve('package.json');
  return {
    hello: 'print(sum(range(10)))',
    exception: 'def divide(a, b):\n    return a / b\nprint("before")\ndivide(1, 0)',
    exit: 'import sys\nsys.exit(3)',
    'infinite loop': 'while True:\n    pass',
    'memory bomb': 'chunks = []\nwhile True:\n    chunks.append(b"x" * (64 << 20))',
    // Files each well under maxFileBytes, without end: only the folder's limit stops it in time.
    'disk filler':
      'import time\ni = 0\nwhile True:\n    with open(f"part{i}", "wb") as part:\n        part.write(b"x" * 65536)\n    i += 1\n    time.sleep(0.001)',
    flood: 'print("x" * 100_000)',
    files: attempts('import os, pyodide_js\nfs = js.process.getBuiltinModule("fs")', {
      'python /etc/passwd': 'open("/etc/passwd").read()',
      'node /etc/passwd': 'fs.readFileSync("/etc/passwd", "utf8")',
      'node repo package.json': `fs.readFileSync(${JSON.stringify(repoPackageJson)}, "utf8")`,
      'mount the repo': `(pyodide_js.mountNodeFS("/host", ${JSON.stringify(resolve('.'))}), open("/host/package.json").read())[1]`,
      'start a process': 'js.process.getBuiltinModule("child_process").execSync("id").toString()',
      'signal the service': `js.process.kill(${process.pid}, 0)`,
      'python symlink out of the folder': '(os.symlink("/etc/passwd", "link"), open("link").read())[1]',
      'node symlink out of the folder': 'fs.symlinkSync("/etc/passwd", js.process.cwd() + "/link2")',
      'write in the working folder': '(open("notes.txt", "w").write("kept"), open("notes.txt").read())[1]',
    }),
    network: attempts(
      'import socket, asyncio\nfrom pyodide.ffi import create_proxy\nnet = js.process.getBuiltinModule("net")',
      {
        'python socket': `socket.create_connection(("127.0.0.1", PORT), timeout=2)`,
        'node net.connect': `connect(PORT)`,
        'node fetch': `js.fetch("http://127.0.0.1:PORT/")`,
      },
    ).replace(
      'await attempt("python socket"',
      `def connect(port):
    future = asyncio.get_event_loop().create_future()
    connection = net.connect(port, "127.0.0.1")
    connection.on("error", create_proxy(lambda error: future.done() or future.set_exception(OSError(error.code))))
    connection.on("connect", create_proxy(lambda *args: future.done() or future.set_result("connected")))
    return future
await attempt("python socket"`,
    ),
    environment:
      'import os, js, json\nprint(json.dumps({"python": dict(os.environ), "node": js.JSON.parse(js.JSON.stringify(js.process.env)).to_py()}))',
  };
}

function writeScript(): string {
  scriptFolder = mkdtempSync(join(tmpdir(), 'mms-code-'));
  const path = join(scriptFolder, 'script.json');
  const run = (code: string): unknown[][] => [
    [{ type: 'server_tool_use', name: 'code_execution', input: { code } }],
    [{ type: 'text', text: 'Done.' }],
  ];
  const port = (probe.address() as AddressInfo).port;
  const entries = Object.entries(programs()).map(([name, code]) => ({
    when: `^run ${name}$`,
    steps: run(code.replaceAll('PORT', String(port))),
  }));
  // Fetches the page, prints only the line it wants, then tries a second fetch (max_uses 1).
  const filter = `page = await web_fetch(url="${origin}/notes")
text = page["content"]["source"]["data"]
print([line for line in text.splitlines() if "otter" in line.lower()][0])
again = await web_fetch("${origin}/notes")
print(again["type"], again.get("error_code"))`;
  entries.push({ when: '^filter ', steps: run(filter) });
  // Search, then fetch the URL that only the search found, all inside the sandbox.
  const research = `hits = await web_search("sleeping otters")
print(hits[0]["title"], "|", hits[0]["content"][:40])
page = await web_fetch(hits[0]["url"])
print([line for line in page["content"]["source"]["data"].splitlines() if "otter" in line.lower()][0])`;
  entries.push({ when: '^research in code$', steps: run(research) });
  // The model itself: search -> fetch a result -> compute with code -> answer.
  entries.push({
    when: '^research by the model$',
    steps: [
      [{ type: 'server_tool_use', name: 'web_search', input: { query: 'sleeping otters' } }],
      [{ type: 'server_tool_use', name: 'web_fetch', input: { url: `${origin}/notes` } }],
      [
        {
          type: 'server_tool_use',
          name: 'code_execution',
          input: { code: 'print(len("Otters hold hands while they sleep.".split()))' },
        },
      ],
      [{ type: 'text', text: 'Six words.' }],
    ],
  });
  // Each fetch of /slow waits out web fetch's 2 s limit; thirty of them pause the running-time
  // deadline for 60 s, so only the wall-clock limit (SHORT_LIMITS: 3 s) can end this execution in time.
  const slowCalls = `for attempt in range(30):
    page = await web_fetch("${origin}/slow")
    print(attempt, page.get("error_code"))
print("finished")`;
  entries.push({ when: '^slow calls ', steps: run(slowCalls) });
  entries.push({
    when: '^no code$',
    steps: [
      [{ type: 'server_tool_use', name: 'code_execution', input: { source: 'print(1)' } } as never],
      [{ type: 'text', text: 'Done.' }],
    ],
  });
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

before(async () => {
  pages = createHttpServer((request, response) => {
    if (request.url === '/notes') response.writeHead(200, { 'content-type': 'text/plain' }).end(PAGE);
    else if (request.url === '/slow')
      return; // never answers: web fetch's own time limit ends each call
    else response.writeHead(404).end();
  });
  await new Promise<void>((ready) => pages.listen(0, '127.0.0.1', ready));
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  probe = createTcpServer((socket) => {
    probeConnections += 1;
    socket.destroy();
  });
  await new Promise<void>((ready) => probe.listen(0, '127.0.0.1', ready));
  // A search index of one document whose URL is the loopback page: only a search can find it.
  const documents = mkdtempSync(join(tmpdir(), 'mms-code-docs-'));
  writeFileSync(
    join(documents, 'otters.md'),
    `---\nurl: ${origin}/notes\ntitle: Otter field notes\n---\nSea otters sleep floating on their backs and hold hands.\n`,
  );
  const script = writeScript();
  const serverTools = {
    webFetch: { allowNetworks: ['127.0.0.0/8'], timeoutMs: 2_000 },
    webSearch: { provider: { type: 'folder' as const, folder: documents, watch: false } },
  };
  service = await startService({
    models: scriptedModels({ script }),
    serverTools: { ...serverTools, codeExecution: { ...LIMITS, warmAtStart: true } },
  });
  limited = await startService({
    models: scriptedModels({ script }),
    serverTools: { ...serverTools, codeExecution: SHORT_LIMITS },
  });
});

after(async () => {
  await Promise.all([service.close(), limited.close()]);
  pages.closeAllConnections();
  pages.close();
  probe.close();
  rmSync(scriptFolder, { recursive: true, force: true });
});

function ask(text: string, tools?: unknown[]): Promise<CodeReply> {
  return askWithTools(service, text, 2000, tools);
}

/** Runs a battery program and returns its printed JSON of attempts. */
async function attemptResults(name: string): Promise<Record<string, string>> {
  const result = executionResult(await ask(`run ${name}`));
  assert.equal(result.return_code, 0, JSON.stringify(result));
  return JSON.parse(result.stdout ?? '') as Record<string, string>;
}

describe('code execution through the loop', () => {
  test('the model runs code, gets the result block, and answers', async () => {
    const reply = await ask('run hello');
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'code_execution_tool_result', 'text'],
    );
    assert.equal(reply.content[0]?.name, 'code_execution');
    assert.deepEqual(executionResult(reply), {
      type: 'code_execution_result',
      stdout: '45\n',
      stderr: '',
      return_code: 0,
      content: [],
    });
    assert.equal(reply.content.at(-1)?.text, 'Done.');
    assert.equal(reply.stop_reason, 'end_turn');
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
  });

  test('a Python exception is a normal result: return code 1, the traceback in stderr, stdout kept', async () => {
    const result = executionResult(await ask('run exception'));
    assert.equal(result.type, 'code_execution_result', JSON.stringify(result));
    assert.equal(result.return_code, 1);
    assert.equal(result.stdout, 'before\n');
    assert.match(result.stderr ?? '', /^Traceback \(most recent call last\):\n {2}File "<code>", line 4/);
    assert.match(result.stderr ?? '', /ZeroDivisionError: division by zero\n$/);
    assert.doesNotMatch(result.stderr ?? '', /_pyodide|_base\.py/);
  });

  test('sys.exit sets the return code', async () => {
    assert.equal(executionResult(await ask('run exit')).return_code, 3);
  });

  test('a call without a string `code` is invalid_tool_input', async () => {
    assert.deepEqual(executionResult(await ask('no code')), {
      type: 'code_execution_tool_result_error',
      error_code: 'invalid_tool_input',
    });
  });

  test('streaming emits the server_tool_use and result blocks as SSE events', async () => {
    const response = await postJson(service, '/v1/messages', {
      model: 'mid',
      max_tokens: 2000,
      stream: true,
      messages: [{ role: 'user', content: 'run hello' }],
      tools: [CODE_TOOL],
    });
    assert.equal(response.status, 200);
    const starts = (await readSse(response))
      .filter((event) => event.event === 'content_block_start')
      .map((event) => event.data.content_block as CodeBlock);
    assert.deepEqual(
      starts.map((block) => block.type),
      ['server_tool_use', 'code_execution_tool_result', 'text'],
    );
    assert.equal(starts[0]?.name, 'code_execution');
    assert.equal(starts[1]?.content?.stdout, '45\n');
  });
});

describe('sandbox battery', () => {
  test('an infinite loop ends in execution_time_exceeded', async () => {
    const reply = await askWithTools(limited, 'run infinite loop', 2000);
    assert.deepEqual(executionResult(reply), {
      type: 'code_execution_tool_result_error',
      error_code: 'execution_time_exceeded',
    });
    assert.equal(reply.content.at(-1)?.text, 'Done.');
  });

  test('slow web_fetch calls from code do not stop the wall clock: past wallTimeoutMs the answer is execution_time_exceeded', async () => {
    const reply = await askWithTools(limited, `slow calls ${origin}/slow`, 2000, [
      CODE_TOOL,
      { type: 'web_fetch_20260209', name: 'web_fetch' },
    ]);
    assert.deepEqual(executionResult(reply), {
      type: 'code_execution_tool_result_error',
      error_code: 'execution_time_exceeded',
    });
    assert.equal(reply.content.at(-1)?.text, 'Done.');
  });

  test('a memory bomb is killed at the memory cap, with a clear stderr', async () => {
    const result = executionResult(await ask('run memory bomb'));
    assert.equal(result.type, 'code_execution_result', JSON.stringify(result));
    assert.equal(result.return_code, 137);
    assert.match(
      result.stderr ?? '',
      new RegExp(`MemoryError: the sandbox went over its memory limit of ${LIMITS.memoryMb} MB and was killed`),
    );
  });

  test('code that fills its working folder file by file is killed at the folder limit, with a clear stderr', async () => {
    const result = executionResult(await ask('run disk filler'));
    assert.equal(result.type, 'code_execution_result', JSON.stringify(result));
    assert.equal(result.return_code, 137);
    assert.match(
      result.stderr ?? '',
      new RegExp(
        `OSError: the working folder went over its limit of ${LIMITS.maxFolderBytes} bytes or \\d+ entries and the sandbox was killed`,
      ),
    );
  });

  test('output past the cap is cut, with a note in stderr', async () => {
    const result = executionResult(await ask('run flood'));
    assert.equal(result.return_code, 0);
    assert.equal(result.stdout, 'x'.repeat(LIMITS.maxOutputBytes));
    assert.match(
      result.stderr ?? '',
      new RegExp(`\\[stdout cut at ${LIMITS.maxOutputBytes} bytes; \\d+ more bytes dropped\\]`),
    );
  });

  test('files outside the working folder, processes and the service cannot be reached; the working folder is writable', async () => {
    const results = await attemptResults('files');
    const refused = [
      'python /etc/passwd',
      'node /etc/passwd',
      'node repo package.json',
      'mount the repo',
      'start a process',
      'python symlink out of the folder',
      'node symlink out of the folder',
    ];
    for (const name of NO_NAMESPACES ? refused : [...refused, 'signal the service']) {
      assert.match(results[name] ?? '', /^refused: /, `${name}: ${results[name]}`);
    }
    assert.doesNotMatch(JSON.stringify(results), /root:x:0|"workspaces"/);
    assert.equal(results['write in the working folder'], 'allowed: kept');
  });

  test(
    'no network: a Python socket, node net and fetch all fail, and the loopback server sees nothing',
    { skip: NO_NAMESPACES },
    async () => {
      const results = await attemptResults('network');
      for (const name of ['python socket', 'node net.connect', 'node fetch'])
        assert.match(results[name] ?? '', /^refused: /, `${name}: ${results[name]}`);
      assert.equal(probeConnections, 0);
    },
  );

  test("the service's environment is not in the sandbox", async () => {
    const result = executionResult(await ask('run environment'));
    assert.equal(result.return_code, 0, result.stderr);
    assert.ok(!(result.stdout ?? '').includes(SECRET));
    const seen = JSON.parse(result.stdout ?? '') as { python: Record<string, string>; node: Record<string, string> };
    assert.deepEqual(Object.keys(seen.node), []);
    assert.equal(seen.python.MMS_TEST_SECRET, undefined);
    assert.notEqual(seen.python.HOME, process.env.HOME);
  });

  test('the service is unaffected: a normal request still succeeds', async () => {
    assert.equal((await fetch(`${service.baseURL}/health`)).status, 200);
    assert.equal(executionResult(await ask('run hello')).stdout, '45\n');
  });
});

describe('programmatic tool calling', () => {
  const fetchTool = { type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 1 };

  test('code calls web_fetch; only what it prints enters the turn, and usage counts the fetch', async () => {
    const reply = await ask(`filter ${origin}/notes`, [CODE_TOOL, fetchTool]);
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['server_tool_use', 'code_execution_tool_result', 'text'],
    );
    const result = executionResult(reply);
    assert.equal(result.return_code, 0, result.stderr);
    // The second fetch is past max_uses 1: the loop's own bookkeeping answers it.
    assert.equal(result.stdout, 'Otters hold hands while they sleep.\nweb_fetch_tool_result_error max_uses_exceeded\n');
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
    assert.doesNotMatch(JSON.stringify(reply), /zebra codeword|PLATYPUS|Field notes/);
  });

  test('code searches, reads the results as text, and fetches a URL only the search found', async () => {
    const searchTool = { type: 'web_search_20260209', name: 'web_search', max_uses: 2 };
    const reply = await ask('research in code', [CODE_TOOL, searchTool, fetchTool]);
    const result = executionResult(reply);
    assert.equal(result.return_code, 0, result.stderr);
    assert.equal(
      result.stdout,
      'Otter field notes | Sea otters sleep floating on their backs\nOtters hold hands while they sleep.\n',
    );
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 1 });
  });

  test('the model searches, fetches a result, runs code on it and answers, in one turn', async () => {
    const direct = ['direct'];
    const tools = [
      CODE_TOOL,
      { type: 'web_search_20260209', name: 'web_search', allowed_callers: direct },
      { type: 'web_fetch_20260209', name: 'web_fetch', allowed_callers: direct },
    ];
    const reply = await ask('research by the model', tools);
    assert.deepEqual(
      reply.content.map((block) => block.type),
      [
        'server_tool_use',
        'web_search_tool_result',
        'server_tool_use',
        'web_fetch_tool_result',
        'server_tool_use',
        'code_execution_tool_result',
        'text',
      ],
    );
    // The fetched URL appeared only in the search results: prior context includes them.
    assert.equal((reply.content[3]?.content as { type: string }).type, 'web_fetch_result');
    assert.equal(executionResult(reply).stdout, '6\n');
    assert.equal(reply.stop_reason, 'end_turn');
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 1, web_fetch_requests: 1 });
  });

  test('with allowed_callers ["direct"] the call from code fails and fetches nothing', async () => {
    const reply = await ask(`filter ${origin}/notes`, [CODE_TOOL, { ...fetchTool, allowed_callers: ['direct'] }]);
    const result = executionResult(reply);
    assert.equal(result.return_code, 1);
    assert.match(
      result.stderr ?? '',
      /PermissionError: web_fetch cannot be called from code: the request's web_fetch tool has allowed_callers \["direct"\]/,
    );
    assert.deepEqual(reply.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
    assert.doesNotMatch(JSON.stringify(reply), /zebra codeword|Otters hold hands/);
  });
});
