/**
 * The tools a request offers, as the engine sees them: custom tools with their own schemas, and
 * server tools as plain functions whose calls the agent loop runs in mms (issue 6: server tools
 * keep running in mms for every backend). Their inputs are those of the public API's server tools.
 */
import { isCustomTool, SERVER_TOOL_NAMES, ServiceError, type ConversationRequest } from '@mms/protocol';

export interface OfferedTool {
  name: string;
  description: string;
  schema: Record<string, unknown>;
  strict: boolean;
  /** A server tool: its call becomes a server_tool_use block. */
  server: boolean;
  /** For messages: `tools.0.input_schema`. */
  where: string;
}

const SERVER_FUNCTIONS: Record<string, { description: string; schema: Record<string, unknown> }> = {
  [SERVER_TOOL_NAMES.webSearch]: {
    description: 'Search the web. Returns result titles, URLs and excerpts.',
    schema: {
      type: 'object',
      properties: { query: { type: 'string', description: 'The search query.' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
  [SERVER_TOOL_NAMES.webFetch]: {
    description:
      'Fetch a web page or document by URL and return its text. Only URLs that appeared earlier in the conversation can be fetched.',
    schema: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The URL to fetch.' } },
      required: ['url'],
      additionalProperties: false,
    },
  },
  [SERVER_TOOL_NAMES.codeExecution]: {
    description: 'Run Python code in a sandbox and return its output.',
    schema: {
      type: 'object',
      properties: { code: { type: 'string', description: 'The Python code to run.' } },
      required: ['code'],
      additionalProperties: false,
    },
  },
};

export function offeredTools(request: ConversationRequest): OfferedTool[] {
  return (request.tools ?? []).map((tool, index) => {
    if (isCustomTool(tool)) {
      return {
        name: tool.name,
        description: tool.description,
        schema: tool.input_schema,
        strict: tool.strict === true,
        server: false,
        where: `tools.${index}.input_schema`,
      };
    }
    const known = SERVER_FUNCTIONS[tool.name]!;
    return {
      name: tool.name,
      description: known.description,
      schema: known.schema,
      strict: false,
      server: true,
      where: `tools.${index}`,
    };
  });
}

/** A call of a tool the request did not offer: the model's output is wrong, not the engine (a 502). */
export function notOfferedError(name: string): ServiceError {
  return new ServiceError('model_output_invalid', `the model called a tool that was not offered: "${name}"`);
}
