/**
 * Programmatic tool calling (spec: server tools, rule 3): which server tools code in the code
 * execution sandbox may call. Rule 3 refuses a request with such a tool beside a strict tool or
 * `disable_parallel_tool_use`, and the sandbox offers code exactly these tools, so both read
 * this one test and cannot disagree.
 */
import { SERVER_TOOL_TYPES } from './constants.js';
import type { ToolParam } from './request-schema.js';
import { isWebFetchTool, isWebSearchTool } from './tool-types.js';

/**
 * A web search or web fetch tool whose `allowed_callers` is unset (the spec: "eligible for
 * programmatic tool calling") or names the code execution tool (programmatic calling asked for
 * by name); `["direct"]` keeps it the model's alone.
 */
export function callableFromCode(tool: ToolParam): boolean {
  if (!isWebSearchTool(tool) && !isWebFetchTool(tool)) return false;
  return tool.allowed_callers === undefined || tool.allowed_callers.includes(SERVER_TOOL_TYPES.codeExecution);
}

/** Why a tool that callableFromCode accepts is callable from code, for messages that name it. */
export function whyCallableFromCode(tool: ToolParam): string {
  const callers = 'allowed_callers' in tool ? tool.allowed_callers : undefined;
  return callers === undefined
    ? 'has no allowed_callers, which makes the request eligible for programmatic tool calling'
    : `has allowed_callers ${JSON.stringify(callers)}, which names the code execution tool (${SERVER_TOOL_TYPES.codeExecution}) and so asks for programmatic tool calling`;
}
