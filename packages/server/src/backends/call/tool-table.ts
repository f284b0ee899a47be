/**
 * The tools a request offers, as every engine is told of them: custom tools with their own
 * schemas, and server tools as plain tools whose calls the turn loop runs in this service (server
 * tools run here for every backend). A server tool's input is the public API's input of that tool.
 */
import { isCustomTool, SERVER_TOOL_NAMES, type ConversationRequest, type ToolParam } from '@mms/protocol';
import { cacheHint } from './cache-hint.js';
import type { OfferedTool } from './model-call.js';

const SERVER_TOOLS: Record<string, { description: string; inputSchema: Record<string, unknown> }> = {
  [SERVER_TOOL_NAMES.webSearch]: {
    description: 'Search the web. Returns the title, URL and an excerpt of each result.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to search for.' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
  [SERVER_TOOL_NAMES.webFetch]: {
    description:
      'Fetch a web page or document by URL and return its text. Only URLs that already appear in the conversation can be fetched.',
    inputSchema: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The URL to fetch.' } },
      required: ['url'],
      additionalProperties: false,
    },
  },
  [SERVER_TOOL_NAMES.codeExecution]: {
    description: 'Run Python code in a sandbox and return its standard output, standard error and return code.',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'string', description: 'The Python code to run.' } },
      required: ['code'],
      additionalProperties: false,
    },
  },
};

export function toolTable(request: ConversationRequest): OfferedTool[] {
  return (request.tools ?? []).map(offeredTool);
}

function offeredTool(tool: ToolParam, index: number): OfferedTool {
  const cache = cacheHint(tool.cache_control);
  if (isCustomTool(tool)) {
    return {
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema,
      strict: tool.strict === true,
      server: false,
      where: `tools.${index}.input_schema`,
      ...cache,
    };
  }
  const known = SERVER_TOOLS[tool.name]!;
  return { name: tool.name, ...known, strict: false, server: true, where: `tools.${index}`, ...cache };
}
