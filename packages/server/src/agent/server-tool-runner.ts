/**
 * How the agent loop runs a server tool the model asked for: tools/service-tools.ts runs web
 * search, web fetch and code execution in the service. A tool that cannot run answers with its
 * public error block (`unavailable` and the rest), so a call always yields a well-formed turn
 * instead of a crash or a silent drop.
 */
import type { MessageRequest, ServerToolResultBlock, ServerToolUseBlock } from '@model-messages/protocol';
import { serverToolKind } from '../tool-kinds/server-tool-kinds.js';

export interface ToolCallContext {
  request: MessageRequest;
  /** Blocks this turn produced so far. */
  turnSoFar: readonly unknown[];
  /**
   * Characters this call's result may put in the context: its share of the turn's input
   * headroom (agent/context-budget.ts), measured as `resultCharacters` measures it.
   */
  resultCharacters: number;
  signal: AbortSignal;
  /**
   * Runs another server tool on behalf of this call (programmatic tool calling: code in the
   * sandbox calling web_search or web_fetch). It goes through the loop's own bookkeeping, so
   * `max_uses` and `usage.server_tool_use` count it like a call the model made directly; its
   * result goes back to the caller only and never enters the turn. `signal` ends the call
   * early (the execution that made it is over), besides the request's own signal.
   */
  callServerTool(name: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<ServerToolResultBlock>;
}

export interface ServerToolRunner {
  run(call: ServerToolUseBlock, context: ToolCallContext): Promise<ServerToolResultBlock>;
  /**
   * Optional: a result `run` made, cut to at most `characters` (as the context budget counts
   * them) the way the tool cuts a result to its share, for a result that took more of the
   * model's tokens than its share (agent/context-budget.ts, issue 32). A runner without it has
   * such a result replaced by max_uses_exceeded.
   */
  fit?(result: ServerToolResultBlock, characters: number): ServerToolResultBlock;
}

/** The error block answering `call`, of its tool's result type (a name no tool has: web search's). */
export function serverToolError(call: ServerToolUseBlock, errorCode: string): ServerToolResultBlock {
  const type = serverToolKind(call.name)?.resultType ?? 'web_search_tool_result';
  return errorResultFor({ type, tool_use_id: call.id }, errorCode);
}

/** The error block of the same tool and call as `result`. */
export function errorResultFor(
  result: Pick<ServerToolResultBlock, 'type' | 'tool_use_id'>,
  errorCode: string,
): ServerToolResultBlock {
  return {
    type: result.type,
    tool_use_id: result.tool_use_id,
    content: { type: `${result.type}_error`, error_code: errorCode },
  };
}

/** Error blocks made by serverToolRefusal, known by identity: the block itself goes on the wire as it is. */
const refusals = new WeakSet<ServerToolResultBlock>();

/**
 * The error block of a call refused before the tool made or started any request (bad input, a
 * URL the conversation never gave, no room left in the context budget): such a call does not
 * count against `max_uses` (agent/run-turn.ts), which limits what a tool does, not what the
 * model asks for. An error after a request was started (a page that would not load, a search
 * engine that failed) is a serverToolError and does count.
 */
export function serverToolRefusal(call: ServerToolUseBlock, errorCode: string): ServerToolResultBlock {
  const block = serverToolError(call, errorCode);
  refusals.add(block);
  return block;
}

export function isRefusal(block: ServerToolResultBlock): boolean {
  return refusals.has(block);
}

export const unavailableServerTools: ServerToolRunner = {
  run: async (call) => serverToolError(call, 'unavailable'),
};
