/**
 * Every server tool this service knows, listed once (issue 33). The tool table, the result text,
 * the signing checks, the turn loop's context budget and usage counters, and the dispatch to the
 * runners read this list; a new tool is its descriptor here and its runner in tools/<name>/
 * (docs/extending.md).
 */
import type { ServerToolResultType, ServerToolUse } from '@model-messages/protocol';
import { codeExecutionKind } from './code-execution-kind.js';
import type { ServerToolKind } from './server-tool-kind.js';
import { toolSearchBm25Kind, toolSearchRegexKind } from './tool-search-kinds.js';
import { webFetchKind } from './web-fetch-kind.js';
import { webSearchKind } from './web-search-kind.js';

export const SERVER_TOOL_KINDS = [
  webSearchKind,
  webFetchKind,
  codeExecutionKind,
  toolSearchRegexKind,
  toolSearchBm25Kind,
] as const satisfies readonly ServerToolKind[];

/** The names of the tools listed: a table keyed by them (the runners, tools/service-tools.ts) needs one entry each. */
export type ServerToolName = (typeof SERVER_TOOL_KINDS)[number]['name'];

const byName = new Map<string, ServerToolKind>(SERVER_TOOL_KINDS.map((kind) => [kind.name, kind]));
const byType = new Map<string, ServerToolKind>(
  SERVER_TOOL_KINDS.flatMap((kind) => kind.types.map((type): [string, ServerToolKind] => [type, kind])),
);
/** The two tool searches share one result block, read the same way: the first listed answers for it. */
const byResultType = new Map<string, ServerToolKind>(
  SERVER_TOOL_KINDS.toReversed().map((kind) => [kind.resultType, kind]),
);

/** The tool the model calls by `name`; undefined for a name no server tool has. */
export function serverToolKind(name: string): ServerToolKind | undefined {
  return byName.get(name);
}

/** The tool a request's tool of this `type` offers; undefined for a custom tool. */
export function serverToolKindOfType(type: string | null | undefined): ServerToolKind | undefined {
  return type === null || type === undefined ? undefined : byType.get(type);
}

/** The tool whose result block is of this `type`; undefined for any other block. */
export function serverToolKindOfResult(type: string): ServerToolKind | undefined {
  return byResultType.get(type);
}

/** Whether a block of this `type` is a server tool's result. */
export function isServerResultType(type: string): type is ServerToolResultType {
  return byResultType.has(type);
}

/** usage.server_tool_use before any call: every counter at 0. */
export function noServerToolUse(): ServerToolUse {
  return { web_search_requests: 0, web_fetch_requests: 0 };
}
