/**
 * Every event the log and the metrics are told of beside requests: the models' backends' (through
 * the registry, models/model-events.ts) and the keys' limiter's (limits/limit-store-event.ts).
 * No event carries request or response text: names, codes, states and durations only.
 */
import type { LimitStoreEvent } from '../limits/limit-store-event.js';
import type { ModelEvent } from '../models/model-events.js';

export type ServiceEvent = ModelEvent | LimitStoreEvent;
