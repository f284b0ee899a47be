export * from './start-service.js';
export * from './sse.js';
export * from './gguf/tiny-llama.js';
export * from './fake-openai-engine.js';
export * from './signed-blocks.js';
export * from './raw-upstream.js';
export * from './raw-messages-server.js';
export * from './search-documents.js';
