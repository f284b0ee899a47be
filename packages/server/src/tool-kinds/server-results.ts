/**
 * A server tool's result block in a request, as the model reads it: the readable text its tool's
 * descriptor gives (server-tool-kinds.ts), the same for every engine, never the wire block.
 */
import type { ContentBlockParam, ServerToolResultType } from '@model-messages/protocol';
import { isServerResultType, serverToolKindOfResult } from './server-tool-kinds.js';

export type ServerResultBlock = Extract<ContentBlockParam, { type: ServerToolResultType }>;

export function isServerResult(block: ContentBlockParam): block is ServerResultBlock {
  return isServerResultType(block.type);
}

export function serverResultText(block: ServerResultBlock): string {
  return serverToolKindOfResult(block.type)!.resultText(block.content);
}
