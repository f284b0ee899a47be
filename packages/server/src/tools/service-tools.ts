/** The server tools this service runs itself, by tool name; the rest answer `unavailable`. */
import { SERVER_TOOL_NAMES, type ServerToolResultBlock, type ServerToolUseBlock } from '@model-messages/protocol';
import { unavailableServerTools, type ServerToolRunner, type ToolCallContext } from '../agent/server-tool-runner.js';
import { codeExecutionConfig } from '../config/config-schema.js';
import type { Signer } from '../signing/signer.js';
import { CodeExecutionTool, type CodeExecutionOptions } from './code-execution/code-execution-tool.js';
import type { CodeRunner } from './code-execution/code-runner.js';
import type { HostLookup } from './web-fetch/guarded-agent.js';
import { WebFetchTool, type WebFetchOptions } from './web-fetch/web-fetch-tool.js';
import { WebSearchTool, type WebSearchOptions } from './web-search/web-search-tool.js';

/** Web search without a config: no provider, so every search answers `unavailable`. */
const NO_WEB_SEARCH: WebSearchOptions = { maxResults: 5, maxResultCharacters: 2_000, timeoutMs: 10_000 };

/**
 * Parts a program that embeds the service may supply in place of the built-in ones; they are
 * objects, not config, so they come through `buildApp`'s options.
 */
export interface ToolProviders {
  /**
   * Runs code for code execution, in place of the child-process runner the config describes
   * (a container or microVM runner at scale; a fake in tests). It must keep CodeRunner's
   * promises (code-runner.ts). The service closes it when it closes.
   */
  codeRunner?: CodeRunner;
  /** Resolves host names for web fetch; every address it answers is still checked at connect. */
  hostLookup?: HostLookup;
}

export class ServiceTools implements ServerToolRunner {
  private readonly webFetch: WebFetchTool;
  private readonly webSearch: WebSearchTool;
  private readonly codeExecution: CodeExecutionTool;

  /** `signer` signs the search results' content (web-search/encrypted-content.ts). */
  constructor(
    options: { webFetch: WebFetchOptions; webSearch?: WebSearchOptions; codeExecution?: CodeExecutionOptions },
    signer: Signer,
    providers: ToolProviders = {},
  ) {
    this.webFetch = new WebFetchTool(options.webFetch, providers.hostLookup);
    this.webSearch = new WebSearchTool(options.webSearch ?? NO_WEB_SEARCH, signer);
    // The sandbox loads nothing until the first execution (unless warmAtStart), so this is cheap.
    this.codeExecution = new CodeExecutionTool(
      options.codeExecution ?? codeExecutionConfig.parse({}),
      providers.codeRunner,
    );
  }

  run(call: ServerToolUseBlock, context: ToolCallContext): Promise<ServerToolResultBlock> {
    if (call.name === SERVER_TOOL_NAMES.webFetch) return this.webFetch.run(call, context);
    if (call.name === SERVER_TOOL_NAMES.webSearch) return this.webSearch.run(call, context);
    if (call.name === SERVER_TOOL_NAMES.codeExecution) return this.codeExecution.run(call, context);
    return unavailableServerTools.run(call, context);
  }

  /** Each tool cuts its own results, as it cuts them to their share when it makes them. */
  fit(result: ServerToolResultBlock, characters: number): ServerToolResultBlock {
    if (result.type === 'web_fetch_tool_result') return this.webFetch.fit(result, characters);
    if (result.type === 'web_search_tool_result') return this.webSearch.fit(result, characters);
    return this.codeExecution.fit(result, characters);
  }

  async close(): Promise<void> {
    await Promise.all([this.webFetch.close(), this.webSearch.close(), this.codeExecution.close()]);
  }
}
