/**
 * The tool search server tools (tool_search_tool_regex and tool_search_tool_bm25, issue 34), run
 * by the service over the request's deferred tools. The result block has the public API's shape:
 * `{type: 'tool_search_tool_result', tool_use_id, content: {type: 'tool_search_tool_search_result',
 * tool_references: [{type: 'tool_reference', tool_name}]}}`, at most 5 tools; the tools it names
 * are offered to the model from the next step of the turn on (call-builder/tool-table.ts), on
 * every backend. A query that is missing or empty, longer than 200 characters (the public limit on
 * a pattern), or a pattern RE2 cannot read, is `invalid_tool_input` with the reason in
 * `error_message`, before any search: max_uses does not count it.
 */
import {
  compileSearchPattern,
  SERVER_TOOL_NAMES,
  TOOL_SEARCH_LIMITS,
  type MessageRequest,
  type ServerToolResultBlock,
  type ServerToolUseBlock,
} from '@model-messages/protocol';
import { serverToolRefusal } from '../../agent/server-tool-runner.js';
import { rankByWords } from './bm25-ranking.js';
import { rankByPattern } from './regex-ranking.js';
import { deferredTools } from './searchable-tools.js';

export class ToolSearchTool {
  async run(call: ServerToolUseBlock, context: { request: MessageRequest }): Promise<ServerToolResultBlock> {
    const query = call.input.query;
    if (typeof query !== 'string' || query.trim() === '') return refusal(call, 'the query is missing or empty');
    if (query.length > TOOL_SEARCH_LIMITS.maxPatternCharacters)
      return refusal(call, `the query is longer than ${TOOL_SEARCH_LIMITS.maxPatternCharacters} characters`);
    const tools = deferredTools(context.request);
    let found: string[];
    if (call.name === SERVER_TOOL_NAMES.toolSearchRegex) {
      const pattern = compileSearchPattern(query);
      if ('problem' in pattern) return refusal(call, `the pattern cannot be read: ${pattern.problem}`);
      found = rankByPattern(tools, pattern, TOOL_SEARCH_LIMITS.maxResults);
    } else {
      found = rankByWords(tools, query, TOOL_SEARCH_LIMITS.maxResults);
    }
    return {
      type: 'tool_search_tool_result',
      tool_use_id: call.id,
      content: {
        type: 'tool_search_tool_search_result',
        tool_references: found.map((name) => ({ type: 'tool_reference', tool_name: name })),
      },
    };
  }

  /** A result is a few names: it is never cut. */
  fit(result: ServerToolResultBlock): ServerToolResultBlock {
    return result;
  }

  async close(): Promise<void> {}
}

/** The public error block, with why in its `error_message`. */
function refusal(call: ServerToolUseBlock, why: string): ServerToolResultBlock {
  const block = serverToolRefusal(call, 'invalid_tool_input');
  (block.content as Record<string, unknown>).error_message = why;
  return block;
}
