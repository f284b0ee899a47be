/** Reads a Server-Sent Events body into its events, checking that `event:` names the data's type. */
export interface SseEvent {
  event: string;
  data: { type: string; [field: string]: unknown };
}

export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      if (event === undefined) throw new Error(`SSE frame without an event line: ${frame}`);
      const parsed = JSON.parse(data) as SseEvent['data'];
      if (parsed.type !== event) throw new Error(`event: ${event} carries data of type ${parsed.type}`);
      return { event, data: parsed };
    });
}

export async function readSse(response: Response): Promise<SseEvent[]> {
  return parseSse(await response.text());
}

/**
 * Reads a stream until its text so far matches `pattern`, and returns that text: a stream opens
 * at admission, so its first chunk says nothing of the backend yet; a test that needs the
 * backend at work waits for the content it sends.
 */
export async function readStreamUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  pattern: RegExp,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!pattern.test(text)) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`the stream ended before ${String(pattern)}: ${text}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}
