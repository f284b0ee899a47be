/**
 * The clients of bench/replica-replay.ts (issue 36): every conversation of the trace at once, as
 * Claude Code sessions are, each sending its turns in order through mms, streamed, with its
 * session header, and waiting a think time (its tool running) between a reply and its next
 * turn. Conversations start `staggerMs` apart, so that they arrive interleaved. Each request's
 * time to first token is measured to its first `content_block_delta` (mms opens the stream with
 * `message_start` at admission, before the engine has said anything); its cache use is the
 * engines' own count (engine-replicas.ts). A request that fails is sent again, as a client does,
 * and counted by whether its output had begun.
 */
import { Agent, request } from 'node:http';
import { parseSse } from '@model-messages/testing';
import { randomSource, type Conversation } from './conversation-trace.js';

export interface ReplaySettings {
  staggerMs: number;
  thinkMs: { low: number; high: number };
  seed: number;
  /** Told each time a request is first sent, with the count sent so far. */
  onSent?: (sent: number) => void;
}

export interface ReplayOutcome {
  /** Milliseconds from sending to the first content, one per answered request. */
  firstTokenMs: number[];
  /** Failures a client saw before any output: what balancing must never let through. */
  failedBeforeOutput: number;
  /** Streams cut after their output began (their replica died mid-reply): sent again. */
  cutAfterOutput: number;
  seconds: number;
}

interface Attempt {
  firstTokenMs: number | undefined;
  complete: boolean;
}

const MAX_ATTEMPTS = 4;

export async function replay(
  conversations: readonly Conversation[],
  port: number,
  settings: ReplaySettings,
): Promise<ReplayOutcome> {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const outcome: ReplayOutcome = {
    firstTokenMs: [],
    failedBeforeOutput: 0,
    cutAfterOutput: 0,
    seconds: 0,
  };
  const started = performance.now();
  let sent = 0;
  try {
    await Promise.all(
      conversations.map(async (conversation) => {
        const random = randomSource(settings.seed * 104_729 + conversation.index);
        await delay(conversation.index * settings.staggerMs);
        for (const turn of conversation.requests) {
          const body = JSON.stringify(turn.body);
          sent += 1;
          settings.onSent?.(sent);
          for (let attempt = 1; ; attempt += 1) {
            const result = await send(agent, port, body, conversation.sessionId);
            if (result.complete) {
              outcome.firstTokenMs.push(result.firstTokenMs!);
              break;
            }
            if (result.firstTokenMs === undefined) outcome.failedBeforeOutput += 1;
            else outcome.cutAfterOutput += 1;
            if (attempt === MAX_ATTEMPTS)
              throw new Error(`conversation ${conversation.index}: a turn failed ${MAX_ATTEMPTS} times`);
          }
          await delay(settings.thinkMs.low + random() * (settings.thinkMs.high - settings.thinkMs.low));
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  outcome.seconds = (performance.now() - started) / 1000;
  return outcome;
}

function send(agent: Agent, port: number, body: string, sessionId: string): Promise<Attempt> {
  return new Promise((resolve) => {
    const sentAt = performance.now();
    const failed = (): void => resolve({ firstTokenMs: undefined, complete: false });
    const outgoing = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        path: '/v1/messages',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-api-key': REPLAY_API_KEY,
          'anthropic-version': '2023-06-01',
          'x-claude-code-session-id': sessionId,
        },
      },
      (response) => {
        let text = '';
        let firstTokenMs: number | undefined;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          if (firstTokenMs === undefined && text.includes('event: content_block_delta'))
            firstTokenMs = performance.now() - sentAt;
        });
        response.on('error', () => resolve({ firstTokenMs, complete: false }));
        response.on('end', () => {
          const events = response.statusCode === 200 ? readEvents(text) : [];
          const stopped = events.some((event) => event.event === 'message_stop');
          resolve({ firstTokenMs, complete: stopped && firstTokenMs !== undefined });
        });
      },
    );
    outgoing.on('error', failed);
    outgoing.end(body);
  });
}

/** A stream's events; one cut mid-event reads as the events before it. */
function readEvents(text: string): ReturnType<typeof parseSse> {
  const whole = text.slice(0, text.lastIndexOf('\n\n') + 2);
  return parseSse(whole);
}

export const REPLAY_API_KEY = 'replay-key-0123456789';

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
