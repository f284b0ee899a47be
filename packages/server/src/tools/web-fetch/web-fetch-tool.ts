/**
 * The web fetch server tool (every version served, `web_fetch_20250910` to `web_fetch_20260318`;
 * `use_cache` changes nothing, as no page is kept between fetches: issue 34): fetches a URL a trusted part of the
 * conversation already gave (prior-context.ts), through the SSRF guard, and returns it as a
 * document block whose text is cut to `max_content_tokens` (4 characters a token) and to this
 * call's share of the turn's input headroom (agent/context-budget.ts; spec: Limits).
 */
import type { Agent } from 'undici';
import {
  isWebFetchTool,
  type MessageRequest,
  type ServerToolResultBlock,
  type ServerToolUseBlock,
  type WebFetchToolParam,
} from '@model-messages/protocol';
import { CHARACTERS_PER_TOKEN } from '../../agent/context-budget.js';
import { serverToolError, serverToolRefusal } from '../../agent/server-tool-runner.js';
import { DomainFilter } from '../domain-filter.js';
import { AddressPolicy } from './address-policy.js';
import { FetchFailure, fetchPage, type FetchLimits } from './fetch-page.js';
import { guardedAgent, UrlNotAllowedError, type HostLookup } from './guarded-agent.js';
import { HtmlConverter } from './html-converter.js';
import { pageToText } from './page-to-text.js';
import { isInPriorContext } from './prior-context.js';

export interface WebFetchOptions extends FetchLimits {
  allowNetworks: readonly string[];
  /** Longest an HTML page may take to turn into markdown; past it the page is url_not_accessible. */
  conversionTimeoutMs: number;
}

/**
 * Conversion workers at most: two, so that one large page does not hold up every other fetch's
 * conversion, while a service on a small machine keeps a core for its requests.
 */
const CONVERSION_WORKERS = 2;

export interface FetchContext {
  request: MessageRequest;
  /** Blocks this turn produced so far: search results make their URLs fetchable. */
  turnSoFar: readonly unknown[];
  /** Characters the result may take in the context: page text, URL and title together. */
  resultCharacters: number;
  signal: AbortSignal;
}

export class WebFetchTool {
  private readonly policy: AddressPolicy;
  /** Made at the first fetch, so that a service that never fetches never loads undici (support/undici.ts). */
  private agent: Agent | undefined;
  private readonly converter: HtmlConverter;

  /** `lookup`: the system resolver unless given (tools/service-tools.ts). */
  constructor(
    private readonly options: WebFetchOptions,
    private readonly lookup?: HostLookup,
  ) {
    this.policy = new AddressPolicy(options.allowNetworks);
    this.converter = new HtmlConverter({ timeLimitMs: options.conversionTimeoutMs, workers: CONVERSION_WORKERS });
  }

  async run(call: ServerToolUseBlock, context: FetchContext): Promise<ServerToolResultBlock> {
    const url = typeof call.input.url === 'string' ? call.input.url : undefined;
    if (!url) return serverToolRefusal(call, 'invalid_tool_input');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return serverToolRefusal(call, 'invalid_tool_input');
    }
    if (url.length > 250) return serverToolRefusal(call, 'url_too_long');
    // Before the prior-context check, which knows only http(s): `file:` is refused for what it is.
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return serverToolRefusal(call, 'url_not_allowed');
    // allowed_domains / blocked_domains: checked on the URL asked for and on every redirect.
    const domains = DomainFilter.fromLists(fetchTool(context.request));
    if (!domains.permits(parsed)) return serverToolRefusal(call, 'url_not_allowed');
    if (!isInPriorContext(url, context.request, context.turnSoFar))
      return serverToolRefusal(call, 'url_not_in_prior_context');
    // The turn's context budget leaves this call too little room for a page and the note that
    // says it was cut: a fetch would spend a request on text the model cannot see, and an empty
    // document reads as an empty page. So no request is made (usage counts none), and the
    // answer is max_uses_exceeded, the public code nearest to "this tool's room in the turn is
    // used up": too_many_requests or unavailable would invite a retry, and a note-only document
    // would claim a retrieval and need room the budget does not have.
    if (!hasRoomForNote(context.resultCharacters - url.length, this.options.maxBytes))
      return serverToolRefusal(call, 'max_uses_exceeded');
    try {
      this.agent ??= guardedAgent(this.policy, this.options.timeoutMs, this.lookup);
      const page = await fetchPage(parsed, this.agent, this.policy, this.options, context.signal, (hop) =>
        domains.permits(hop),
      );
      const converted = await pageToText(page, this.converter, context.signal);
      const cutAtBytes = page.truncated ? this.options.maxBytes : undefined;
      const title = titleWithin(converted.title, context.resultCharacters - page.url.length, cutAtBytes);
      return fetchResult(
        call,
        page.url,
        title,
        fitText(converted.text, contentCharacters(context, page.url, title), cutAtBytes),
      );
    } catch (error) {
      if (error instanceof FetchFailure) return serverToolError(call, error.errorCode);
      if (error instanceof UrlNotAllowedError || (error as { cause?: unknown }).cause instanceof UrlNotAllowedError)
        return serverToolError(call, 'url_not_allowed');
      return serverToolError(call, 'url_not_accessible');
    }
  }

  /**
   * A page this tool fetched, its text cut to what `characters` leaves beside its URL and title,
   * with the note that says so (ServerToolRunner.fit). An error result is as short as it gets.
   */
  fit(result: ServerToolResultBlock, characters: number): ServerToolResultBlock {
    const content = result.content as FetchedContent;
    if (content.type !== 'web_fetch_result') return result;
    const { url, content: document } = content;
    const room = Math.max(0, characters - url.length - (document.title?.length ?? 0));
    const data = fitText(document.source.data, room, undefined);
    return { ...result, content: { ...content, content: { ...document, source: { ...document.source, data } } } };
  }

  async close(): Promise<void> {
    await Promise.all([this.agent?.close(), this.converter.close()]);
  }
}

/** The content of a web_fetch_tool_result this tool made (`fetchResult`). */
interface FetchedContent {
  type: string;
  url: string;
  content: { title: string | null; source: { data: string } };
}

/** The page text's room: the caller's max_content_tokens, within the result's share less URL and title. */
function contentCharacters(context: FetchContext, url: string, title: string | null): number {
  const room = Math.max(0, context.resultCharacters - url.length - (title?.length ?? 0));
  const cap = fetchTool(context.request)?.max_content_tokens;
  return cap === undefined ? room : Math.min(cap * CHARACTERS_PER_TOKEN, room);
}

/**
 * The page's title, cut where it would leave the text (`room`: the result's share less the URL)
 * too little room for the note of a cut page, which tells the model there is more to read.
 */
function titleWithin(title: string | null, room: number, cutAtBytes: number | undefined): string | null {
  if (title === null) return null;
  return title.slice(0, Math.max(0, room - cutNote(room, cutAtBytes).length - 1));
}

/** True when `room` characters hold at least one character of text and the longest note fitText may add. */
function hasRoomForNote(room: number, maxBytes: number): boolean {
  return room > cutNote(room, maxBytes).length;
}

/** The note of a page cut at `room` (and at the byte cap, when `cutAtBytes` is given). */
function cutNote(room: number, cutAtBytes: number | undefined): string {
  return truncationNote(cutAtBytes === undefined ? [roomReason(room)] : [bytesReason(cutAtBytes), roomReason(room)]);
}

/**
 * The page text within `room` characters. A page cut short, at the byte cap or here, ends in a
 * note that says so (inside the room), so the model knows there is more than it sees rather
 * than taking a cut page for the whole.
 */
export function fitText(text: string, room: number, cutAtBytes: number | undefined): string {
  const reasons = cutAtBytes === undefined ? [] : [bytesReason(cutAtBytes)];
  if (reasons.length === 0 && text.length <= room) return text;
  if (text.length + truncationNote(reasons).length > room) reasons.push(roomReason(room));
  const note = truncationNote(reasons);
  // Too little room for the note: the text alone, cut. The tool fetches nothing for a share
  // this small, so only a max_content_tokens of a few dozen characters, or a redirect to a URL
  // far longer than the one asked for, gets here.
  if (room <= note.length) return text.slice(0, room);
  return text.slice(0, room - note.length) + note;
}

function truncationNote(reasons: readonly string[]): string {
  return `\n\n[Truncated: ${reasons.join('; ')}.]`;
}

function bytesReason(maxBytes: number): string {
  return `the page is longer than the ${maxBytes} bytes this service reads`;
}

function roomReason(room: number): string {
  return `its text goes on past the ${room} characters this fetch may return`;
}

function fetchTool(request: MessageRequest): WebFetchToolParam | undefined {
  return (request.tools ?? []).find(isWebFetchTool);
}

function fetchResult(call: ServerToolUseBlock, url: string, title: string | null, text: string): ServerToolResultBlock {
  return {
    type: 'web_fetch_tool_result',
    tool_use_id: call.id,
    content: {
      type: 'web_fetch_result',
      url,
      content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, title },
      retrieved_at: new Date().toISOString(),
    },
  };
}
