/**
 * The blocks of the model's calls, as every backend opens them: a call of a server tool is a
 * `server_tool_use` block (the turn loop runs it), a call of a client tool a `tool_use` block.
 */
import { ServiceError, type ContentBlock } from '@model-messages/protocol';
import { uniqueId } from '../../support/unique-id.js';
import type { OfferedTool } from './model-call.js';

/** The block that opens the model's call of `tool`, its input still to stream. */
export function toolCallBlock(tool: Pick<OfferedTool, 'name' | 'server'>): ContentBlock {
  return tool.server
    ? { type: 'server_tool_use', id: uniqueId('srvtoolu_'), name: tool.name, input: {} }
    : { type: 'tool_use', id: uniqueId('toolu_'), name: tool.name, input: {}, caller: { type: 'direct' } };
}

/** A call of a tool the request did not offer: the model's output is wrong, not the engine (a 502). */
export function notOfferedError(name: string): ServiceError {
  return new ServiceError('model_output_invalid', `the model called a tool that was not offered: "${name}"`);
}
