/**
 * Traces for `mms serve`. The service makes its spans through `@opentelemetry/api` alone
 * (observability/tracing.ts), and they cost next to nothing until an SDK is registered. When
 * the usual OTEL_* variables ask for traces (OTEL_TRACES_EXPORTER other than `none`, or an OTLP
 * endpoint), this starts `@opentelemetry/sdk-node`, which reads the rest of them itself
 * (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_TRACES_SAMPLER, ...). The SDK is an
 * optional dependency: a service that is not traced does not install it, and one that asks for
 * traces without it stops at start, saying what to install, rather than running untraced.
 *
 * A program that embeds the service (buildApp) sets up its own SDK instead.
 */
import { ConfigError } from '../support/config-error.js';

/** What `serve` stops, after the last reply, so that the last spans are exported. */
export interface Tracing {
  shutdown(): Promise<void>;
}

export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Starts the SDK when the environment asks for traces; undefined when it does not. */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  let sdk: typeof import('@opentelemetry/sdk-node');
  try {
    sdk = await import('@opentelemetry/sdk-node');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigError(
      'OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT asks for traces, but @opentelemetry/sdk-node is not installed: ' +
        'npm install @opentelemetry/sdk-node@^0.223.0 beside mms, or unset them',
    );
  }
  // The service's own spans only: no instrumentation of node:http or undici beside them.
  const tracing = new sdk.NodeSDK({
    instrumentations: [],
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'mms' }),
  });
  tracing.start();
  return tracing;
}
