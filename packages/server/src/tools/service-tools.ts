/** The server tools this service runs itself, by tool name; the rest answer `unavailable`. */
import { SERVER_TOOL_NAMES, type ServerToolResultBlock, type ServerToolUseBlock } from '@mms/protocol';
import { unavailableServerTools, type ServerToolRunner, type ToolCallContext } from '../agent/server-tool-runner.js';
import { WebFetchTool, type WebFetchOptions } from './web-fetch/web-fetch-tool.js';

export class ServiceTools implements ServerToolRunner {
  private readonly webFetch: WebFetchTool;

  constructor(options: { webFetch: WebFetchOptions }) {
    this.webFetch = new WebFetchTool(options.webFetch);
  }

  run(call: ServerToolUseBlock, context: ToolCallContext): Promise<ServerToolResultBlock> {
    if (call.name === SERVER_TOOL_NAMES.webFetch) return this.webFetch.run(call, context);
    return unavailableServerTools.run(call, context);
  }

  close(): Promise<void> {
    return this.webFetch.close();
  }
}
