/** Settings both sides of the engine benchmark must agree on: the service child and the direct engine. */

export const API_KEY = 'bench-key-123456';
export const MODEL_ID = 'bench';
/** The model entry's contextWindow; the backend's context size is min(this, the model's 4096). */
export const CONTEXT_SIZE = 2048;
/** One thread: on this 2-core machine a second llama.cpp thread is slower, not faster. */
export const THREADS = 1;
export const MAX_OUTPUT_TOKENS = 4096;
export const PROMPT = 'Write a short story about a lighthouse keeper and a storm.';
