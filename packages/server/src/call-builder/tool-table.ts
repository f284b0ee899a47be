/**
 * The tools a request offers, as every engine is told of them: custom tools with their own
 * schemas, and server tools as plain tools whose calls the turn loop runs in this service (server
 * tools run here for every backend). A server tool's input is the public API's input of that tool.
 */
import {
  isCustomTool,
  referencedNames,
  toolReferences,
  type ContentBlock,
  type ConversationRequest,
  type ToolParam,
} from '@model-messages/protocol';
import { serverToolKind } from '../tool-kinds/server-tool-kinds.js';
import { cacheHint } from './cache-hint.js';
import type { OfferedTool } from '../backends/call/model-call.js';

/**
 * A tool with `defer_loading` is left out of what the model is told until it is loaded: a
 * `tool_reference` naming it in a tool result (what a client's tool search answers, as Claude
 * Code's ToolSearch does) or in a `tool_search_tool_result` (the service's own tool search, issue
 * 34), or a tool_choice that forces it. So a client with hundreds of tools puts only those the
 * model searched for into the prompt, as with the public API.
 */
export function toolTable(request: ConversationRequest, alsoLoaded: ReadonlySet<string> = new Set()): OfferedTool[] {
  const tools = request.tools ?? [];
  const loaded = loadedTools(request);
  const offered: OfferedTool[] = [];
  tools.forEach((tool, index) => {
    if (tool.defer_loading === true && !loaded.has(tool.name) && !alsoLoaded.has(tool.name)) return;
    offered.push(offeredTool(tool, index));
  });
  // tool_choice "any" must have a tool to call: with every tool deferred, every tool is offered.
  if (offered.length === 0 && request.tool_choice?.type === 'any') return tools.map(offeredTool);
  return offered;
}

/**
 * The table for a step of the turn: the request's, with the deferred tools that the turn's own
 * tool searches found so far (issue 34), so that the model may call them in the same turn, on
 * every backend. The same table when the turn has searched for none.
 */
export function withToolsFound(
  table: OfferedTool[],
  request: ConversationRequest,
  turnSoFar: readonly ContentBlock[],
): OfferedTool[] {
  const found = new Set<string>();
  for (const block of turnSoFar) for (const [, name] of referencedNames(block)) found.add(name);
  if (found.size === 0 || [...found].every((name) => table.some((tool) => tool.name === name))) return table;
  return toolTable(request, found);
}

/** Names of the deferred tools the conversation loaded: by tool_reference, or forced by tool_choice. */
function loadedTools(request: ConversationRequest): ReadonlySet<string> {
  const loaded = new Set(toolReferences(request.messages).map((reference) => reference.toolName));
  if (request.tool_choice?.type === 'tool') loaded.add(request.tool_choice.name);
  return loaded;
}

function offeredTool(tool: ToolParam, index: number): OfferedTool {
  const cache = cacheHint(tool.cache_control);
  if (isCustomTool(tool)) {
    return {
      name: tool.name,
      description: withExamples(tool.description, tool.input_examples),
      inputSchema: tool.input_schema,
      strict: tool.strict === true,
      server: false,
      where: `tools.${index}.input_schema`,
      ...cache,
    };
  }
  // What the model is told of a server tool is its descriptor's (tool-kinds/).
  const { description, inputSchema } = serverToolKind(tool.name)!.offer;
  const strict = tool.strict === true;
  return { name: tool.name, description, inputSchema, strict, server: true, where: `tools.${index}`, ...cache };
}

/** `input_examples` reach the model with the description, as one JSON object per line. */
function withExamples(description: string, examples: ReadonlyArray<Record<string, unknown>> | undefined): string {
  if (!examples || examples.length === 0) return description;
  const lines = examples.map((example) => JSON.stringify(example)).join('\n');
  return `${description}\n\nExamples of input:\n${lines}`;
}
