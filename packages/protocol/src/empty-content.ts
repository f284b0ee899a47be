/**
 * Content that may not be empty, as the public API has it (issue 32: each was a 200 here, a 400
 * there): a message's content, but for the final assistant one (a prefill may be empty); a text
 * block's text; a user turn's text, which must hold more than whitespace (a model has nothing to
 * answer); a `redacted_thinking` block's data. An assistant turn's text may be only whitespace:
 * a model's own "\n\n" before a call comes back in it.
 */
import { ServiceError } from './errors.js';
import type { ContentBlockParam } from './content-block-schema.js';
import type { MessageParam } from './request-schema.js';

export function checkEmptyContent(messages: readonly MessageParam[]): void {
  // Indexed loops: every request passes here, most with nothing to refuse.
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (message.role === 'system' || message.content === undefined) continue;
    const finalAssistant = message.role === 'assistant' && index === messages.length - 1;
    const content = message.content;
    if (!finalAssistant && (content === '' || content.length === 0))
      throw new ServiceError(
        'invalid_request',
        `messages.${index}: all messages must have non-empty content except for the optional final assistant message`,
      );
    if (typeof content === 'string') {
      if (message.role === 'user') checkUserText(content, `messages.${index}.content`);
      continue;
    }
    for (let position = 0; position < content.length; position += 1)
      checkBlock(content[position]!, message.role, `messages.${index}.content.${position}`);
  }
}

function checkBlock(block: ContentBlockParam, role: 'user' | 'assistant', where: string): void {
  if (block.type === 'text') {
    if (block.text === '')
      throw new ServiceError('invalid_request', `${where}.text: text content blocks must be non-empty`);
    if (role === 'user') checkUserText(block.text, `${where}.text`);
  } else if (block.type === 'redacted_thinking' && block.data === '') {
    throw new ServiceError('invalid_request', `${where}.data: a redacted_thinking block's data must be non-empty`);
  } else if (block.type === 'tool_result' && Array.isArray(block.content)) {
    block.content.forEach((inner, position) => {
      if (inner.type === 'text' && inner.text === '')
        throw new ServiceError(
          'invalid_request',
          `${where}.content.${position}.text: text content blocks must be non-empty`,
        );
    });
  }
}

function checkUserText(text: string, where: string): void {
  if (text.trim() === '')
    throw new ServiceError(
      'invalid_request',
      `${where}: ${text === '' ? 'text content blocks must be non-empty' : 'text content blocks must contain non-whitespace text'}`,
    );
}
