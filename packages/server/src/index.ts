export { buildApp, type AppOptions } from './app.js';
export { loadConfig, validateConfig, ConfigError } from './config/load-config.js';
export { serviceConfig, type ServiceConfig, type ServiceConfigInput } from './config/config-schema.js';
export { ModelRegistry } from './models/model-registry.js';
export type { Backend, BackendStepRequest } from './backends/backend.js';
export type { StreamPart } from './streaming/stream-part.js';
export type { ToolProviders } from './tools/service-tools.js';
export type { CodeRunner, RunOptions, RunOutcome, HostFunction } from './tools/code-execution/code-runner.js';
export type { HostLookup } from './tools/web-fetch/guarded-agent.js';
