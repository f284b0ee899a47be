/**
 * Reads a Server-Sent Events body from fetch, as the console's live feed and the playground's
 * replies come: EventSource cannot send the key header, so the console reads the stream itself.
 */
export interface StreamEvent {
  event: string;
  data: string;
}

/** Calls `onEvent` for each event until the stream ends (or its request is aborted). */
export async function readEventStream(response: Response, onEvent: (event: StreamEvent) => void): Promise<void> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    pending += value.replace(/\r\n/g, '\n');
    let end: number;
    while ((end = pending.indexOf('\n\n')) >= 0) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) onEvent({ event, data: data.join('\n') });
    }
  }
}
