/**
 * What the config holds that no reply may show (http/reply-redaction.ts): every secret (the
 * service's own API keys and signing key, each backend's secrets and the values of the variables
 * it names, the search provider's key, the limits' Redis URL and its password) and every address
 * the service is configured to reach (each backend's, the search provider's, the Redis's). A
 * backend's are the fields its kind declares (BackendKind.configStrings; issue 33: no hand-kept
 * list of kinds here, which a new kind could miss). Read once, when the app is built: an
 * environment variable changed later is not searched for, and is not used by the backend either.
 */
import { configStringValues } from '../backends/backend-kinds.js';
import { modelBackends, type ServiceConfig } from './config-schema.js';

export interface ConfiguredSecrets {
  secrets: string[];
  addresses: string[];
}

export function configuredSecrets(
  config: ServiceConfig,
  environment: NodeJS.ProcessEnv = process.env,
): ConfiguredSecrets {
  const signingKeys = typeof config.signingKey === 'string' ? [config.signingKey] : (config.signingKey ?? []);
  const secrets: Array<string | undefined> = [...config.apiKeys, ...signingKeys];
  const baseURLs: string[] = [];
  for (const model of config.models) {
    for (const backend of modelBackends(model)) {
      secrets.push(...configStringValues(backend, 'secrets'));
      for (const variable of configStringValues(backend, 'secretVariables')) secrets.push(environment[variable]);
      baseURLs.push(...configStringValues(backend, 'addresses'));
    }
  }
  // A redis: URL has no origin (URL gives "null"): its forms are its host:port and host name.
  const redisForms: string[] = [];
  const store = config.limits.store;
  if (store.type === 'redis') {
    const url = new URL(store.url);
    secrets.push(decodeURIComponent(url.password), store.url);
    redisForms.push(url.host);
    if (!LOOPBACK_NAMES.has(url.hostname)) redisForms.push(url.hostname);
  }
  const provider = config.serverTools.webSearch.provider;
  if (provider?.type === 'brave') secrets.push(provider.apiKey);
  if (provider?.type === 'brave' || provider?.type === 'searxng') baseURLs.push(provider.baseURL);
  return {
    secrets: secrets.filter((secret): secret is string => secret !== undefined && secret !== ''),
    addresses: [...baseURLs.flatMap(addressForms), ...redisForms],
  };
}

/**
 * The ways a message may write one base URL: whole, its origin, `host:port` and the bare host
 * name. A loopback host name alone says nothing about the deployment and is common in other
 * text, so it is not one of them; its `host:port` is.
 */
function addressForms(baseURL: string): string[] {
  const url = new URL(baseURL);
  const forms = [baseURL, url.href, url.origin, url.host];
  if (!LOOPBACK_NAMES.has(url.hostname)) forms.push(url.hostname);
  return forms;
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);
