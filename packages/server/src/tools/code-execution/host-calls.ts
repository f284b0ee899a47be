/**
 * The service's side of the calls code makes to host functions (web_search and web_fetch from
 * Python). The code can write any line to its message channel, so the service answers only
 * calls that the child's own `callHost` (sandbox-child.mjs) could have sent, and anything else
 * is a breach: the sandbox is killed at once and nothing more of it is read. Answering forged
 * calls instead let one execution make the service parse and answer hundreds of thousands of
 * lines a second, which froze it.
 *
 * What honest code never sends, and so is a breach:
 * - a message that is not a well-formed call;
 * - a call of a function not offered to this code: the child defines only the offered ones,
 *   and one refused to code (`allowed_callers`) raises PermissionError before sending;
 * - a call past `maxHostCalls`: the child counts them too and raises instead of sending;
 * - more than MAX_CALLS_IN_FLIGHT calls waiting for answers at once: the child holds further
 *   calls back until an answer comes, so calls arrive no faster than the service answers them.
 * Answers left unread are bounded where they are written (answer-writer.ts).
 */
import type { AnswerWriter } from './answer-writer.js';
import type { RunOptions } from './code-runner.js';
import type { PausableDeadline } from './pausable-deadline.js';

/** Calls one execution may have waiting for answers; its asyncio.gather of more waits its turn. */
export const MAX_CALLS_IN_FLIGHT = 8;
/** The longest message line the sandbox may send: a call is a tool name and a query or a URL. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** Enough of a forged function name to recognise it in a breach note. */
const NAME_SHOWN = 40;

export interface HostCallsContext {
  maxHostCalls: number;
  options: RunOptions;
  /** The sandbox's running-time deadline, held while a call runs: that time is the tool's. */
  deadline: PausableDeadline;
  /** Aborted when the execution ends, so that no search or fetch outlives it. */
  over: AbortSignal;
  answers: AnswerWriter;
  onBreach: (why: string) => void;
}

interface Call {
  id: number;
  name: string;
  input: Record<string, unknown>;
}

export class HostCalls {
  private made = 0;
  private inFlight = 0;

  constructor(private readonly context: HostCallsContext) {}

  /** One message from the child during the execution. */
  receive(message: unknown): void {
    const call = asCall(message);
    if (call === undefined) return this.context.onBreach('a message that is not a well-formed call');
    const offered = this.context.options.hostFunctions.find((candidate) => candidate.name === call.name);
    if (offered === undefined || offered.refusal !== undefined)
      return this.context.onBreach(`a call of ${describeName(call.name)}, a function not offered to this code`);
    this.made += 1;
    if (this.made > this.context.maxHostCalls)
      return this.context.onBreach(`a call past the limit of ${this.context.maxHostCalls} host function calls`);
    if (this.inFlight >= MAX_CALLS_IN_FLIGHT)
      return this.context.onBreach(`more than ${MAX_CALLS_IN_FLIGHT} calls waiting for answers at once`);
    this.inFlight += 1;
    void this.answer(call);
  }

  private async answer(call: Call): Promise<void> {
    const { options, deadline, over, answers } = this.context;
    const release = deadline.hold();
    let answer: unknown;
    try {
      answer = { type: 'result', id: call.id, content: await options.callHost(call.name, call.input, over) };
    } catch (error) {
      answer = { type: 'error', id: call.id, message: `${call.name} failed: ${(error as Error).message}` };
    } finally {
      release();
    }
    // Counted out before the answer is written: the child counts it out only once it has read
    // it, so the child's own count is never below this one and honest code never breaches.
    this.inFlight -= 1;
    answers.send(answer);
  }
}

function asCall(message: unknown): Call | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const call = message as { type?: unknown; id?: unknown; name?: unknown; input?: unknown };
  if (call.type !== 'call' || !Number.isSafeInteger(call.id) || typeof call.name !== 'string') return undefined;
  if (typeof call.input !== 'object' || call.input === null || Array.isArray(call.input)) return undefined;
  return { id: call.id as number, name: call.name, input: call.input as Record<string, unknown> };
}

function describeName(name: string): string {
  return JSON.stringify(name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}...` : name);
}
