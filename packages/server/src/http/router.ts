/**
 * The service's routes: a method and a path of literal segments and `:name` parameters. A path
 * with no parameter is one map lookup (every `POST /v1/messages` takes this way); the rest, a
 * handful, are a list scanned in order. HEAD is answered by the GET route (node:http leaves out
 * the body of a reply to HEAD).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ClientKey } from '../keys/client-key.js';
import type { BodyMemoryHold } from './body-memory-budget.js';
import type { RequestRecord } from '../observability/request-record.js';
import { ServiceError, type ApiVersion } from '@model-messages/protocol';

export interface RouteContext {
  request: IncomingMessage;
  response: ServerResponse;
  requestId: string;
  /**
   * The request's `anthropic-version` (undefined outside /v1/: /health needs none). Every version
   * gets the same replies today (docs/decisions/0004); a reply that comes to differ by version
   * reads it here.
   */
  apiVersion: ApiVersion | undefined;
  /** The API key the request carried (keys/client-key.ts); undefined on the routes that need none (/health). */
  key: ClientKey | undefined;
  /** Path parameters, percent-decoded. */
  params: Readonly<Record<string, string>>;
  /** The query string, without the `?`: parsed only by the routes that read it. */
  query: string;
  log: Logger;
  /** What the request did, for its access log line, metrics and span (observability/). */
  record: RequestRecord;
  /** What the request's body holds of the app's budget of body bytes in flight (http/body-memory-budget.ts). */
  bodyMemory: BodyMemoryHold;
}

/** A JSON reply for the app to write, with any headers of the route's own. */
export interface JsonReply {
  /** Default 200. A failure is thrown as a ServiceError instead; this is for a reply that is not an error (/ready's 503). */
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A reply that is not JSON (the Prometheus text of /metrics, the console's files), written as the JSON ones are. */
export interface TextReply {
  text: string;
  contentType: string;
  /** Headers of the route's own (the console's Content-Security-Policy). */
  headers?: Readonly<Record<string, string>>;
}

/** Returned by a route that wrote its reply itself (a stream). */
export const WRITTEN = Symbol('written');

export type RouteHandler = (context: RouteContext) => Promise<JsonReply | TextReply | typeof WRITTEN>;

interface Route {
  method: string;
  path: string;
  segments: readonly string[];
  handler: RouteHandler;
}

export interface RouteMatch {
  handler: RouteHandler;
  /** The route's path as registered (`/v1/models/:id`): what the log, metrics and spans name. */
  route: string;
  params: Readonly<Record<string, string>>;
}

const NO_PARAMETERS: Readonly<Record<string, string>> = Object.freeze({});

export class Router {
  /** Routes with no parameter, by `METHOD path`. */
  private readonly exact = new Map<string, RouteMatch>();
  private readonly withParameters: Route[] = [];

  get(path: string, handler: RouteHandler): void {
    this.add('GET', path, handler);
  }

  post(path: string, handler: RouteHandler): void {
    this.add('POST', path, handler);
  }

  /** The route for `method` and `path` (no query), or undefined. */
  find(method: string, path: string): RouteMatch | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const exact = this.exact.get(`${wanted} ${path}`);
    if (exact) return exact;
    const segments = path.split('/');
    for (const route of this.withParameters) {
      if (route.method !== wanted || route.segments.length !== segments.length) continue;
      const params = matchSegments(route.segments, segments);
      if (params) return { handler: route.handler, route: route.path, params };
    }
    return undefined;
  }

  private add(method: string, path: string, handler: RouteHandler): void {
    if (path.includes('/:')) this.withParameters.push({ method, path, segments: path.split('/'), handler });
    // One match per route, made now: a request to it allocates none.
    else this.exact.set(`${method} ${path}`, { handler, route: path, params: NO_PARAMETERS });
  }
}

function matchSegments(pattern: readonly string[], segments: readonly string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let index = 0; index < pattern.length; index += 1) {
    const expected = pattern[index]!;
    const actual = segments[index]!;
    if (expected.startsWith(':')) {
      if (actual === '') return undefined;
      params[expected.slice(1)] = decodeSegment(actual);
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ServiceError('invalid_request', `the path segment "${segment}" is not valid percent-encoding`);
  }
}
