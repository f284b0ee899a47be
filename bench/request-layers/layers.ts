/** The layers of bench/request-layers.ts, cheapest first; layer-server.ts says what each does. */
export const LAYERS = ['bare', 'edge', 'validate', 'turn', 'app'] as const;
export type Layer = (typeof LAYERS)[number];
