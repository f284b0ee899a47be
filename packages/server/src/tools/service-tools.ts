/**
 * The server tools this service runs itself: one runner per tool of the list
 * (tool-kinds/server-tool-kinds.ts), found by the call's name; a name no tool has answers
 * `unavailable`. The runners' table is keyed by the list's names (issue 33), so a tool listed
 * there does not type check until its runner is here.
 */
import type { ServerToolResultBlock, ServerToolUseBlock } from '@model-messages/protocol';
import { unavailableServerTools, type ServerToolRunner, type ToolCallContext } from '../agent/server-tool-runner.js';
import { codeExecutionConfig } from '../config/config-schema.js';
import type { Signer } from '../signing/signer.js';
import { SERVER_TOOL_KINDS, serverToolKindOfResult, type ServerToolName } from '../tool-kinds/server-tool-kinds.js';
import { CodeExecutionTool, type CodeExecutionOptions } from './code-execution/code-execution-tool.js';
import type { CodeRunner } from './code-execution/code-runner.js';
import { ToolSearchTool } from './tool-search/tool-search-tool.js';
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

/** The config of the tools (the config's `serverTools`); a tool left out runs with its defaults. */
export interface ServerToolOptions {
  webFetch: WebFetchOptions;
  webSearch?: WebSearchOptions;
  codeExecution?: CodeExecutionOptions;
}

/** One tool's runner: runs its calls, cuts a result it made to fewer characters, and closes. */
interface ToolRunner {
  run(call: ServerToolUseBlock, context: ToolCallContext): Promise<ServerToolResultBlock>;
  fit(result: ServerToolResultBlock, characters: number): ServerToolResultBlock;
  close(): Promise<void>;
}

/** What a runner is built from. */
interface RunnerSources {
  options: ServerToolOptions;
  /** Signs the search results' content (signing/search-content.ts). */
  signer: Signer;
  providers: ToolProviders;
}

const RUNNERS: Record<ServerToolName, (sources: RunnerSources) => ToolRunner> = {
  web_search: ({ options, signer }) => new WebSearchTool(options.webSearch ?? NO_WEB_SEARCH, signer),
  web_fetch: ({ options, providers }) => new WebFetchTool(options.webFetch, providers.hostLookup),
  // The sandbox loads nothing until the first execution (unless warmAtStart), so this is cheap.
  code_execution: ({ options, providers }) =>
    new CodeExecutionTool(options.codeExecution ?? codeExecutionConfig.parse({}), providers.codeRunner),
  // Tool search reads the request alone: nothing to configure, nothing held.
  tool_search_tool_regex: () => new ToolSearchTool(),
  tool_search_tool_bm25: () => new ToolSearchTool(),
};

export class ServiceTools implements ServerToolRunner {
  private readonly runners: ReadonlyMap<string, ToolRunner>;

  constructor(options: ServerToolOptions, signer: Signer, providers: ToolProviders = {}) {
    const sources = { options, signer, providers };
    this.runners = new Map(SERVER_TOOL_KINDS.map((kind) => [kind.name, RUNNERS[kind.name](sources)]));
  }

  run(call: ServerToolUseBlock, context: ToolCallContext): Promise<ServerToolResultBlock> {
    return (this.runners.get(call.name) ?? unavailableServerTools).run(call, context);
  }

  /** Each tool cuts its own results, as it cuts them to their share when it makes them. */
  fit(result: ServerToolResultBlock, characters: number): ServerToolResultBlock {
    const runner = this.runners.get(serverToolKindOfResult(result.type)?.name ?? '');
    return runner ? runner.fit(result, characters) : result;
  }

  async close(): Promise<void> {
    await Promise.all([...this.runners.values()].map((runner) => runner.close()));
  }
}
