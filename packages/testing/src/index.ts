export * from './start-service.js';
export * from './sse.js';
