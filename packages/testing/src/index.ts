export * from './start-service.js';
export * from './sse.js';
export * from './gguf/tiny-llama.js';
