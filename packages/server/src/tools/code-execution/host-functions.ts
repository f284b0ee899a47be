/**
 * Programmatic tool calling: which of the request's server tools code in the sandbox may call,
 * as protocol's callableFromCode decides it (rule 3 reads the same test). A web search or web
 * fetch tool it refuses (`allowed_callers: ["direct"]`) is the model's alone, and code that
 * calls it gets a PermissionError saying so (a plain NameError would not tell it why). The other
 * way round, the turn loop refuses the model's own call of a tool whose list lacks `direct`.
 */
import {
  callableFromCode,
  isWebFetchTool,
  isWebSearchTool,
  SERVER_TOOL_NAMES,
  type MessageRequest,
} from '@model-messages/protocol';
import type { HostFunction } from './code-runner.js';
import { readableText } from '../../tool-kinds/readable-search-results.js';

/** The tool input's main field, which code may also pass positionally. */
const FIRST_PARAMETERS: Record<string, string> = {
  [SERVER_TOOL_NAMES.webSearch]: 'query',
  [SERVER_TOOL_NAMES.webFetch]: 'url',
};

export function hostFunctionsFor(request: MessageRequest): HostFunction[] {
  const functions: HostFunction[] = [];
  for (const tool of request.tools ?? []) {
    if (!isWebSearchTool(tool) && !isWebFetchTool(tool)) continue;
    const name = tool.name;
    functions.push({
      name,
      firstParameter: FIRST_PARAMETERS[name]!,
      ...(callableFromCode(tool)
        ? {}
        : {
            refusal: `${name} cannot be called from code: the request's ${name} tool has allowed_callers ${JSON.stringify(tool.allowed_callers)}, so only the model may call it`,
          }),
    });
  }
  return functions;
}

/**
 * What code receives from a call: the result block's content, with each search result's
 * `encrypted_content` (opaque to clients) replaced by its readable `content`, so that code can
 * filter results by what they say.
 */
export function resultForCode(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((item: unknown) => {
    if (typeof item !== 'object' || item === null || (item as { type?: unknown }).type !== 'web_search_result')
      return item;
    const { encrypted_content: _encrypted, ...rest } = item as { encrypted_content?: unknown };
    return { ...rest, content: readableText(item) ?? '' };
  });
}
