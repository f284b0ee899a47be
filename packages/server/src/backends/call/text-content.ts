/**
 * Content as text, for engines that take some of it only as text (a text document, a tool's
 * result), and the refusal of what they cannot take: a 400 that names the block, never a drop or
 * a placeholder, since the model would answer without what the caller sent. One wording for every
 * backend, so that a caller can tell what to change whichever engine answers.
 */
import { ServiceError } from '@model-messages/protocol';
import type { DocumentPart, ImagePart, ToolResultPart } from './model-call.js';

export function unsupportedContent(where: string, what: string, backend: string, advice = ''): ServiceError {
  return new ServiceError(
    'invalid_request',
    `${where}: ${what} not supported by the ${backend} backend${advice ? `; ${advice}` : ''}`,
  );
}

/**
 * An image, for an engine or a model that takes none. One wording wherever the image stands, in
 * a user turn or inside a tool's result, since whether a backend takes images is one rule: the
 * path says which it was (`messages.2.content.0.content.1`).
 */
export function unsupportedImage(part: ImagePart, backend: string): ServiceError {
  return unsupportedContent(part.where, 'images are', backend);
}

/** A document as the text an engine without document support reads: its title, context and text. */
export function documentText(part: DocumentPart, backend: string): string {
  const source = part.source;
  if (source.kind !== 'text') {
    throw unsupportedContent(
      part.where,
      source.kind === 'pdf' ? 'PDF documents are' : 'URL documents are',
      backend,
      'send the text',
    );
  }
  return [part.title, part.context, source.text].filter((piece) => piece !== undefined && piece !== '').join('\n\n');
}

/**
 * A tool's result as one text: its text parts and documents, one per line; an image in it is
 * refused (an engine that takes images passes the result without them and sends them apart). A
 * client's error result starts with `Error:`; a server tool's result already says what failed
 * (tool-kinds/server-results.ts).
 */
export function toolResultText(part: ToolResultPart, backend: string): string {
  const text = part.content
    .map((inner) => {
      if (inner.type === 'text') return inner.text;
      if (inner.type === 'document') return documentText(inner, backend);
      throw unsupportedImage(inner, backend);
    })
    .join('\n');
  return part.isError && !part.server ? `Error: ${text}` : text;
}
