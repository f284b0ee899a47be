/**
 * Rules of the server tools' versions and of tool search (issue 34), for the endpoint rules:
 *
 * - a field a version does not have is refused, naming the versions that brought it: the tools
 *   of every version share one schema (request-schema.ts), so the schema alone would let an
 *   older version carry a newer field unseen;
 * - `response_inclusion: "full"` (the default of the versions that have it) asks for the results
 *   of calls that code made to come back in the reply. Here they go to the code alone, which is
 *   `"excluded"`: so where code may call the tool, `full` is refused rather than answered as the
 *   other; where no code may call it, the field changes nothing;
 * - a tool search tool is never deferred: nothing could load it (the public docs' rule);
 * - nor is every tool: the model would be offered none, and a deferred tool is loaded only by a
 *   search the model makes or a `tool_reference` the client sends back (the public docs' rule).
 */
import { callableFromCode } from './callable-from-code.js';
import { SERVER_TOOL_VERSIONS } from './constants.js';
import { ServiceError } from './errors.js';
import type { ConversationRequest, ToolParam } from './request-schema.js';
import { isWebFetchTool, isWebSearchTool } from './tool-types.js';

/** Each version-bound field, and the versions that have it. */
const FIELD_VERSIONS: ReadonlyArray<{ field: 'use_cache' | 'response_inclusion'; versions: readonly string[] }> = [
  { field: 'use_cache', versions: ['web_fetch_20260309', 'web_fetch_20260318'] },
  { field: 'response_inclusion', versions: ['web_search_20260318', 'web_fetch_20260318'] },
];

const CODE_EXECUTION_TYPES: ReadonlySet<unknown> = new Set(SERVER_TOOL_VERSIONS.codeExecution);
const TOOL_SEARCH_TYPES: ReadonlySet<unknown> = new Set([
  ...SERVER_TOOL_VERSIONS.toolSearchRegex,
  ...SERVER_TOOL_VERSIONS.toolSearchBm25,
]);

export function checkServerToolRules(request: ConversationRequest): void {
  const tools = request.tools ?? [];
  const codeRuns = tools.some((tool) => CODE_EXECUTION_TYPES.has(tool.type));
  tools.forEach((tool, index) => {
    checkVersionFields(tool, index);
    if (codeRuns) checkResponseInclusion(tool, index);
    if (TOOL_SEARCH_TYPES.has(tool.type) && tool.defer_loading === true)
      throw new ServiceError(
        'invalid_request',
        `tools.${index}.defer_loading: the tool search tool "${tool.name}" cannot be deferred: it is what finds the deferred tools`,
      );
  });
  if (tools.length > 0 && tools.every((tool) => tool.defer_loading === true))
    throw new ServiceError(
      'invalid_request',
      'tools: every tool has defer_loading: true, so the model would be offered none; leave at least one tool loaded (a tool search tool, or a tool of your own that returns tool_reference blocks)',
    );
}

function checkVersionFields(tool: ToolParam, index: number): void {
  for (const { field, versions } of FIELD_VERSIONS) {
    if ((tool as Record<string, unknown>)[field] === undefined) continue;
    if (versions.includes(String(tool.type))) continue;
    throw new ServiceError(
      'invalid_request',
      `tools.${index}.${field}: ${String(tool.type)} has no ${field}; it came with ${versions.join(' and ')}`,
    );
  }
}

function checkResponseInclusion(tool: ToolParam, index: number): void {
  if (!isWebSearchTool(tool) && !isWebFetchTool(tool)) return;
  if (!tool.type.endsWith('_20260318') || tool.response_inclusion === 'excluded' || !callableFromCode(tool)) return;
  throw new ServiceError(
    'invalid_request',
    `tools.${index}.response_inclusion: "full"${tool.response_inclusion === undefined ? ' (the default)' : ''} is not served: the results of calls that code makes go to the code alone here; set response_inclusion to "excluded", or allowed_callers to ["direct"]`,
  );
}
