/**
 * The `backend` field of a model in the config: one schema per listed kind (backend-kinds.ts),
 * told apart by `type`.
 */
import { z } from 'zod';
import type { WithPlacedDefaults } from './backend-defaults.js';
import { BACKEND_KINDS } from './backend-kinds.js';

type ConfigSchemas<Kinds> = {
  -readonly [Index in keyof Kinds]: Kinds[Index] extends { config: infer Schema } ? Schema : never;
};

export const backendConfig = z.discriminatedUnion(
  'type',
  BACKEND_KINDS.map((kind) => kind.config) as ConfigSchemas<typeof BACKEND_KINDS>,
);

/** As written in the file: the defaults that depend on the backend's place in its list are still unset. */
export type BackendConfigInput = z.infer<typeof backendConfig>;
/** With those defaults applied (backend-placement.ts): what a backend is built from. */
export type BackendConfig = WithPlacedDefaults<BackendConfigInput>;
