/**
 * Tool search by a regular expression (tool_search_tool_regex, issue 34): the tools whose name,
 * description or parameters the pattern matches, a match in the name first, then in the
 * description, then in the parameters, and in the request's order among equals.
 */
import type { SearchPattern } from '@model-messages/protocol';
import type { SearchableTool } from './searchable-tools.js';

export function rankByPattern(
  tools: readonly SearchableTool[],
  pattern: Extract<SearchPattern, { test: unknown }>,
  limit: number,
): string[] {
  return tools
    .map((tool, order) => ({ tool, order, rank: rankOf(tool, pattern) }))
    .filter((entry) => entry.rank > 0)
    .sort((one, other) => other.rank - one.rank || one.order - other.order)
    .slice(0, limit)
    .map((entry) => entry.tool.name);
}

function rankOf(tool: SearchableTool, pattern: Extract<SearchPattern, { test: unknown }>): number {
  if (pattern.test(tool.name)) return 3;
  if (pattern.test(tool.description)) return 2;
  return pattern.test(tool.parameters) ? 1 : 0;
}
