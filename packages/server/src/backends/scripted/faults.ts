/**
 * Fault injection for clients' tests: with `faults: true` in the backend config, the request
 * header `mms-fault` makes the scripted backend fail in one chosen way. Off by default.
 */
import { ServiceError } from '@model-messages/protocol';
import type { OfferedTool } from '../call/model-call.js';
import type { PlannedBlock } from './script-file.js';
import { violatingObject } from './schema-instance.js';
import { buildOrRefuse } from './unbuildable-schema.js';

export const FAULT_NAMES = [
  'http-500',
  'http-529',
  'http-429',
  'truncate',
  'no-tool-call',
  'invalid-tool-input',
  'stream-error',
] as const;
export type Fault = (typeof FAULT_NAMES)[number];

export function parseFault(header: string | undefined): Fault | undefined {
  if (header === undefined || header === '') return undefined;
  const fault = FAULT_NAMES.find((name) => name === header);
  if (!fault)
    throw new ServiceError(
      'invalid_request',
      `mms-fault: unknown fault "${header}"; known faults: ${FAULT_NAMES.join(', ')}`,
    );
  return fault;
}

/** The faults that answer with an HTTP error before any output. */
export function throwHttpFault(fault: Fault | undefined): void {
  if (fault === 'http-500') throw new ServiceError('internal', 'Injected fault: http-500');
  if (fault === 'http-529') throw new ServiceError('overloaded', 'Injected fault: http-529', { retryAfterSeconds: 1 });
  if (fault === 'http-429')
    throw new ServiceError('rate_limited', 'Injected fault: http-429', { retryAfterSeconds: 1 });
}

/** The faults that change what the model says. */
export function reshapeBlocks(
  blocks: PlannedBlock[],
  fault: Fault | undefined,
  tools: readonly OfferedTool[],
): PlannedBlock[] {
  if (fault === 'no-tool-call') {
    return blocks.map((block) =>
      block.type === 'tool_use' ? { type: 'text', text: 'I would rather answer in prose than call a tool.' } : block,
    );
  }
  if (fault === 'invalid-tool-input')
    return blocks.map((block) => (block.type === 'tool_use' ? withInvalidInput(block, tools) : block));
  return blocks;
}

function withInvalidInput(
  block: Extract<PlannedBlock, { type: 'tool_use' }>,
  tools: readonly OfferedTool[],
): PlannedBlock {
  const tool = tools.find((candidate) => !candidate.server && candidate.name === block.name);
  const input = tool && buildOrRefuse(() => violatingObject(tool.inputSchema), tool.where);
  if (!input)
    throw new ServiceError(
      'invalid_request',
      `mms-fault invalid-tool-input: the schema of "${block.name}" accepts every object, so no input can violate it`,
    );
  return { ...block, input };
}
