/**
 * The log lines of the backends' events (service-events.ts): one per event, with `event` naming
 * its type, so that fallbacks, circuit and health changes, regenerations, model loads and downloads can be
 * found beside the access log's lines. A fallback names its request (`reqId`).
 */
import type { Logger } from 'pino';
import type { ServiceEvent } from './service-events.js';

export function logEvent(log: Logger, event: ServiceEvent): void {
  switch (event.type) {
    case 'warning':
      log.warn({ event: event.type, model: event.model }, event.message);
      return;
    case 'fallback':
      log.warn(
        {
          event: event.type,
          reqId: event.requestId,
          model: event.model,
          backend: event.backend,
          phase: event.phase,
          errorCode: event.errorCode,
        },
        'a backend failed the request before its first output; the request moves to the next backend, if any',
      );
      return;
    case 'circuit': {
      const fields = { event: event.type, model: event.model, backend: event.backend, from: event.from, to: event.to };
      const message = `circuit ${event.to}: ${CIRCUIT_MEANINGS[event.to]}`;
      if (event.to === 'open') log.warn(fields, message);
      else log.info(fields, message);
      return;
    }
    case 'health': {
      const fields = { event: event.type, model: event.model, backend: event.backend, up: event.up };
      if (event.up) log.info(fields, 'probe: the backend answers again and takes requests');
      else log.warn(fields, 'probe: the backend does not answer; requests try the others first');
      return;
    }
    case 'regeneration':
      log.info(
        { event: event.type, model: event.model, backend: event.backend, output: event.output },
        'output failed its schema and was generated once more',
      );
      return;
    case 'model-load':
      log.info(
        { event: event.type, model: event.model, backend: event.backend, seconds: event.seconds },
        'model loaded',
      );
      return;
    case 'model-download':
      log.info(
        {
          event: event.type,
          model: event.model,
          backend: event.backend,
          source: event.source,
          seconds: event.seconds,
        },
        'model downloaded',
      );
      return;
    case 'limit-store':
      if (event.state === 'unreachable')
        log.warn(
          { event: event.type, state: event.state, onStoreError: event.onStoreError, detail: event.detail },
          event.onStoreError === 'allow'
            ? "the limits' store does not answer: requests are served on this replica's own count of the keys' limits until it does (limits.onStoreError)"
            : "the limits' store does not answer: requests of keys with limits are answered 503 until it does (limits.onStoreError)",
        );
      else log.info({ event: event.type, state: event.state }, "the limits' store answers again: limits apply");
      return;
    default:
      event satisfies never;
  }
}

const CIRCUIT_MEANINGS = {
  open: 'requests skip the backend until its cool-down has passed',
  'half-open': 'one request probes the backend',
  closed: 'the backend takes requests again',
} as const;
