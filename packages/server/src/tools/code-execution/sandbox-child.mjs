/**
 * The sandbox child: one Node process that loads pyodide, waits for one program, runs it and
 * exits with the program's return code. Plain JavaScript so that it starts without tsx.
 *
 * It trusts nothing it runs: code in pyodide reaches this process through `import js`, so the
 * walls are the process's own (its namespaces, user, resource limits and Node's permission
 * flags, set by the parent). Everything here is a convenience for honest code, not a guard.
 *
 * argv: <pyodide folder> <working folder> run [<snapshot file>]
 *   or: <pyodide folder> <working folder> make-snapshot
 * A snapshot is pyodide's memory image after start-up and the prelude below: loading from it
 * takes a fraction of a second instead of seconds. `make-snapshot` writes one to
 * <working folder>/python.snapshot and exits; it runs no program.
 *
 * fd 0 (from the parent): JSON lines, `{"type":"run","code":..,"functions":[..],"limits":{..}}`
 *   once, then `{"type":"result","id":..,"content":..}` or `{"type":"error","id":..,"message":..}`
 *   per call.
 * fd 3 (to the parent): JSON lines, `{"type":"ready"}` once loaded, then
 *   `{"type":"call","id":..,"name":..,"input":{..}}` per host function call. The parent kills
 *   the sandbox for any call this file would not send (host-calls.ts): one past
 *   `limits.maxHostCalls`, more than `limits.maxCallsInFlight` unanswered, a line longer than
 *   `limits.maxMessageBytes`. So `callHost` keeps within them, and says so in Python instead.
 * fd 1 and 2: the program's stdout and stderr, raw; the parent caps them.
 */
import { constants as fsConstants, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [pyodideFolder, workingFolder, mode, snapshotFile] = process.argv.slice(2);
/** Where the working folder appears inside Python, and the program's current folder. */
const PYTHON_WORKING_FOLDER = '/workspace';
/** EX_SOFTWARE: the sandbox itself failed, not the program. */
const SANDBOX_FAILURE = 70;

// Node's permission model refuses process.binding, and pyodide's NODEFS asks it only for the fs
// open flags, which node:fs exports anyway.
const binding = process.binding;
process.binding = (name) => (name === 'constants' ? { fs: fsConstants } : binding.call(process, name));

// The parent going away closes our stdin: leave rather than linger as an orphan.
process.stdin.on('end', () => process.exit(SANDBOX_FAILURE));

function send(message) {
  // fd 3 is a blocking socket that Node does not wrap, so a synchronous write is whole and ordered.
  writeSync(3, `${JSON.stringify(message)}\n`);
}

const PRELUDE = `
import json as _json, sys as _sys, traceback as _traceback
from pyodide.code import eval_code_async as _eval_code_async

def _mms_function(call_host, name, first_parameter, refusal):
    async def function(*args, **arguments):
        if refusal is not None:
            raise PermissionError(refusal)
        if len(args) > 1:
            raise TypeError(f"{name}() takes at most 1 positional argument ({len(args)} given)")
        if args:
            if first_parameter in arguments:
                raise TypeError(f"{name}() got multiple values for argument '{first_parameter}'")
            arguments[first_parameter] = args[0]
        answer = _json.loads(await call_host(name, _json.dumps(arguments)))
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["content"]
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"await {name}({first_parameter}=...): runs the request's {name} tool and returns its result content (dicts and lists)."
    return function

def _mms_namespace(call_host, functions_json):
    namespace = {"__name__": "__main__"}
    for spec in _json.loads(functions_json):
        namespace[spec["name"]] = _mms_function(call_host, spec["name"], spec["firstParameter"], spec.get("refusal"))
    return namespace

async def _mms_run(source, namespace):
    try:
        await _eval_code_async(source, namespace, return_mode="none", filename="<code>")
        return 0
    except SystemExit as exit:
        if exit.code is None:
            return 0
        if isinstance(exit.code, int):
            return exit.code
        print(exit.code, file=_sys.stderr)
        return 1
    except BaseException as error:
        # Start the traceback at the program's own frames: pyodide's runner frames mean nothing to the reader.
        frames = error.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename != "<code>":
            frames = frames.tb_next
        _traceback.print_exception(type(error), error, frames)
        return 1
    finally:
        _sys.stdout.flush()
        _sys.stderr.flush()
`;

async function loadPython(options) {
  const { loadPyodide } = await import(pathToFileURL(`${pyodideFolder}/pyodide.mjs`).href);
  return loadPyodide({ indexURL: `${pyodideFolder}/`, env: { HOME: PYTHON_WORKING_FOLDER }, ...options });
}

async function makeSnapshot() {
  const pyodide = await loadPython({ _makeSnapshot: true });
  await pyodide.runPythonAsync(PRELUDE, { filename: '<sandbox>' });
  writeFileSync(`${workingFolder}/python.snapshot`, pyodide.makeMemorySnapshot());
  exitAfterOutput(0);
}

async function load() {
  const pyodide = snapshotFile ? await loadPython({ _loadSnapshot: readFileSync(snapshotFile) }) : await loadPython({});
  if (!snapshotFile) await pyodide.runPythonAsync(PRELUDE, { filename: '<sandbox>' });
  // Pyodide hands over a view into wasm memory that it reuses, so each chunk is copied.
  pyodide.setStdout({ write: (bytes) => (process.stdout.write(Buffer.from(bytes)), bytes.length) });
  pyodide.setStderr({ write: (bytes) => (process.stderr.write(Buffer.from(bytes)), bytes.length) });
  // fd 0 carries the parent's messages, so the program's stdin is empty, as under `python < /dev/null`.
  pyodide.setStdin({ stdin: () => null });
  // The working folder is mounted after the snapshot, never in it: each sandbox has its own.
  pyodide.FS.mkdirTree(PYTHON_WORKING_FOLDER);
  pyodide.mountNodeFS(PYTHON_WORKING_FOLDER, workingFolder);
  await pyodide.runPythonAsync(`import os\nos.chdir(${JSON.stringify(PYTHON_WORKING_FOLDER)})`, {
    filename: '<sandbox>',
  });
  return pyodide;
}

/** Host function calls waiting for the parent's answer, by id. */
const pending = new Map();
/** Calls not sent yet because `limits.maxCallsInFlight` are waiting for answers. */
const held = [];
let nextCallId = 0;
let callsMade = 0;
/** The run message's `limits`. */
let limits = { maxHostCalls: 0, maxCallsInFlight: 1, maxMessageBytes: 0 };

/** Resolves to the answer as JSON: `{"content": ..}` or `{"error": ..}` (the prelude raises the latter). */
function callHost(name, inputJson) {
  callsMade += 1;
  if (callsMade > limits.maxHostCalls)
    return Promise.resolve(JSON.stringify({ error: `more than ${limits.maxHostCalls} tool calls in one execution` }));
  const message = { type: 'call', id: 0, name, input: JSON.parse(inputJson) };
  // The id's digits are not counted: a margin of some bytes under the cap is enough for them.
  if (Buffer.byteLength(JSON.stringify(message)) > limits.maxMessageBytes - 32)
    return Promise.resolve(JSON.stringify({ error: `the call's input is over ${limits.maxMessageBytes} bytes` }));
  return new Promise((resolve) => {
    held.push({ message, resolve });
    sendHeldCalls();
  });
}

function sendHeldCalls() {
  while (held.length > 0 && pending.size < limits.maxCallsInFlight) {
    const { message, resolve } = held.shift();
    nextCallId += 1;
    pending.set(nextCallId, resolve);
    send({ ...message, id: nextCallId });
  }
}

async function runProgram(pyodide, message) {
  limits = message.limits;
  const namespace = pyodide.globals.get('_mms_namespace')(callHost, JSON.stringify(message.functions));
  pyodide.globals.set('_mms_program', message.code);
  pyodide.globals.set('_mms_program_namespace', namespace);
  const returnCode = await pyodide.runPythonAsync('await _mms_run(_mms_program, _mms_program_namespace)');
  exitAfterOutput(returnCode);
}

/** Exits once stdout and stderr have handed everything to the parent. */
function exitAfterOutput(code) {
  let open = 2;
  const closed = () => {
    open -= 1;
    if (open === 0) process.exit(code);
  };
  process.stdout.write('', closed);
  process.stderr.write('', closed);
}

function onMessage(pyodide, message) {
  if (message.type === 'run') {
    runProgram(pyodide, message).catch(fail);
    return;
  }
  const resolve = pending.get(message.id);
  if (resolve === undefined) return;
  pending.delete(message.id);
  resolve(
    JSON.stringify(message.type === 'result' ? { content: message.content } : { error: String(message.message) }),
  );
  sendHeldCalls();
}

function fail(error) {
  process.stderr.write(`sandbox failure: ${error instanceof Error ? error.stack : String(error)}\n`);
  exitAfterOutput(SANDBOX_FAILURE);
}

try {
  if (mode === 'make-snapshot') await makeSnapshot();
  else await serve(await load());
} catch (error) {
  fail(error);
}

function serve(pyodide) {
  let buffered = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line !== '') onMessage(pyodide, JSON.parse(line));
      newline = buffered.indexOf('\n');
    }
  });
  send({ type: 'ready' });
}
