/**
 * The tool `type`s a request may give, and the refusal of any other in this service's own words
 * (issue 34): a type the schema does not know was a 400 in the validation library's wording
 * ("Invalid discriminator value. Expected 'custom' | 'null' | ..."), which named neither the
 * versions served nor why one is not. Checked before the schema (parse-request.ts), so that a
 * tool of a type this service does not run is refused as that, whatever else it carries.
 */
import { SERVER_TOOL_VERSIONS } from './constants.js';
import type { ToolParam, WebFetchToolParam, WebSearchToolParam } from './request-schema.js';

/** The versions served, by the tool they offer (`web_search`), for the messages below. */
const SERVED: ReadonlyArray<{ tool: string; types: readonly string[] }> = [
  { tool: 'web_search', types: SERVER_TOOL_VERSIONS.webSearch },
  { tool: 'web_fetch', types: SERVER_TOOL_VERSIONS.webFetch },
  { tool: 'code_execution', types: SERVER_TOOL_VERSIONS.codeExecution },
  { tool: 'tool_search_tool_regex', types: SERVER_TOOL_VERSIONS.toolSearchRegex },
  { tool: 'tool_search_tool_bm25', types: SERVER_TOOL_VERSIONS.toolSearchBm25 },
];

const SERVED_TYPES: ReadonlySet<string> = new Set(['custom', ...SERVED.flatMap((entry) => entry.types)]);

/**
 * Types of the public API this service knows and does not run, each with why; matched in order
 * against the type (a prefix stands for every version of it).
 */
const NOT_RUN: ReadonlyArray<{ prefix: string; tool: string | undefined; why: string }> = [
  {
    prefix: 'code_execution_',
    tool: 'code_execution',
    why: "it runs bash commands and edits files (its results are bash_code_execution and text_editor_code_execution blocks), and this service's sandbox runs Python only",
  },
  {
    prefix: 'web_search_',
    tool: 'web_search',
    why: 'this service does not know that version',
  },
  {
    prefix: 'web_fetch_',
    tool: 'web_fetch',
    why: 'this service does not know that version',
  },
  {
    prefix: 'tool_search_tool_',
    tool: undefined,
    why: 'this service does not know that version',
  },
  ...['bash_', 'text_editor_', 'computer_', 'memory_'].map((prefix) => ({
    prefix,
    tool: undefined,
    why: 'it is a tool the client runs, whose definition this service does not have; give it as a custom tool with its input_schema',
  })),
  ...['browser_toolset_', 'computer_toolset_'].map((prefix) => ({
    prefix,
    tool: undefined,
    why: 'this service runs no browser or computer toolsets',
  })),
  { prefix: 'advisor_', tool: undefined, why: 'this service runs no advisor model' },
  {
    prefix: 'mcp_toolset',
    tool: undefined,
    why: 'this service connects to no MCP servers; give their tools as custom tools',
  },
];

/**
 * The refusal of the first tool in `body.tools` whose `type` is a string this service does not
 * serve: `tools.N.type: ...`, naming the type, why, and the versions served. Undefined when every
 * type is served, or when the shape is not even that of a list of tools (the schema says what).
 */
export function unservedToolType(body: object): string | undefined {
  const tools = (body as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return undefined;
  for (let index = 0; index < tools.length; index += 1) {
    const tool: unknown = tools[index];
    if (tool === null || typeof tool !== 'object') continue;
    const type = (tool as { type?: unknown }).type;
    if (typeof type !== 'string' || SERVED_TYPES.has(type)) continue;
    return `tools.${index}.type: ${refusal(type)}`;
  }
  return undefined;
}

function refusal(type: string): string {
  const known = NOT_RUN.find((entry) => type.startsWith(entry.prefix));
  const served = SERVED.find((entry) => entry.tool === known?.tool);
  if (known && served)
    return `"${type}" is not served here: ${known.why}; the versions of ${served.tool} served are ${served.types.join(', ')}`;
  const every = `custom (or no type), ${SERVED.flatMap((entry) => entry.types).join(', ')}`;
  if (known) return `"${type}" is not served here: ${known.why}; the tool types served are ${every}`;
  return `"${type}" is not a tool type this service knows; the tool types served are ${every}`;
}

/** A web search tool, of any version served. */
export function isWebSearchTool(tool: ToolParam): tool is WebSearchToolParam {
  return (SERVER_TOOL_VERSIONS.webSearch as readonly (string | null | undefined)[]).includes(tool.type);
}

/** A web fetch tool, of any version served. */
export function isWebFetchTool(tool: ToolParam): tool is WebFetchToolParam {
  return (SERVER_TOOL_VERSIONS.webFetch as readonly (string | null | undefined)[]).includes(tool.type);
}
