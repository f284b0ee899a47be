/**
 * What tool search reads of each tool it may find (issue 34): the request's deferred tools, each
 * by its name, its description and its parameters (their names and descriptions), which the
 * public docs name as what both searches match against. A server tool reads as the model would
 * be told of it (tool-kinds/).
 */
import { isCustomTool, type MessageRequest, type ToolParam } from '@model-messages/protocol';
import { serverToolKind } from '../../tool-kinds/server-tool-kinds.js';

export interface SearchableTool {
  name: string;
  description: string;
  /** Parameter names and descriptions, nested ones included, one per line. */
  parameters: string;
}

/** Levels of nested `properties` read: deeper parameters are rarely what a search names. */
const MAX_DEPTH = 4;

export function deferredTools(request: MessageRequest): SearchableTool[] {
  return (request.tools ?? []).filter((tool) => tool.defer_loading === true).map(searchable);
}

function searchable(tool: ToolParam): SearchableTool {
  if (isCustomTool(tool))
    return { name: tool.name, description: tool.description, parameters: parameterLines(tool.input_schema).join('\n') };
  const offer = serverToolKind(tool.name)?.offer;
  return {
    name: tool.name,
    description: offer?.description ?? '',
    parameters: offer ? parameterLines(offer.inputSchema).join('\n') : '',
  };
}

/** Each parameter's name and description, depth first, as `name: description`. */
function parameterLines(schema: unknown, depth = 0): string[] {
  if (depth >= MAX_DEPTH || schema === null || typeof schema !== 'object') return [];
  const properties = (schema as { properties?: unknown }).properties;
  if (properties === null || typeof properties !== 'object') return [];
  return Object.entries(properties as Record<string, unknown>).flatMap(([name, property]) => {
    const description = (property as { description?: unknown } | null)?.description;
    const line = typeof description === 'string' ? `${name}: ${description}` : name;
    return [line, ...parameterLines(property, depth + 1)];
  });
}
