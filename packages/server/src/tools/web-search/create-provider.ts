/** The search provider the config names, or none (then every search answers `unavailable`). */
import { resolve } from 'node:path';
import { BraveSearchProvider } from './brave-provider.js';
import { FolderSearchProvider } from './folder-provider.js';
import type { SearchProvider } from './search-provider.js';
import { SearxngSearchProvider } from './searxng-provider.js';

/**
 * `serverTools.webSearch.provider` after validation. load-config.ts has made its paths absolute
 * against the config file's folder; a config given inline (tests) resolves against the cwd.
 */
export type SearchProviderConfig =
  | {
      type: 'folder';
      folder: string;
      urlBase?: string | undefined;
      indexFile?: string | undefined;
      watch?: boolean | undefined;
    }
  | { type: 'searxng'; baseURL: string }
  | { type: 'brave'; apiKey: string; baseURL?: string | undefined };

export function createSearchProvider(config: SearchProviderConfig | undefined): SearchProvider | undefined {
  switch (config?.type) {
    case undefined:
      return undefined;
    case 'folder':
      return new FolderSearchProvider({
        folder: resolve(config.folder),
        urlBase: config.urlBase,
        indexFile: config.indexFile === undefined ? undefined : resolve(config.indexFile),
        watch: config.watch,
      });
    case 'searxng':
      return new SearxngSearchProvider(config.baseURL);
    case 'brave':
      return new BraveSearchProvider(config.apiKey, config.baseURL);
    default:
      return config satisfies never;
  }
}
