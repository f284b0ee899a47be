/**
 * Sources and `[n]` citations of research prose (spec: Research conventions). Sources are the
 * results of web search and web fetch in the order they first appeared in the turn, numbered
 * from 1 and deduplicated by URL, exactly as the research prompt tells the model to number them.
 */
import type { ContentBlock } from '@model-messages/protocol';

export interface Source {
  /** The `n` of `[n]`. */
  index: number;
  url: string;
  title: string | null;
  from: 'web_search' | 'web_fetch';
}

export interface Citation {
  /** The number as written in the prose. */
  marker: number;
  /** Undefined when the prose cites a number that no source has. */
  source: Source | undefined;
}

export interface CitationMap {
  sources: Source[];
  /** One per distinct marker, in order of first appearance in the prose. */
  citations: Citation[];
  /** Markers with no source: a sign of invented citations. */
  unresolved: number[];
}

export function collectSources(blocks: readonly ContentBlock[]): Source[] {
  const sources: Source[] = [];
  const seen = new Set<string>();
  const add = (url: unknown, title: unknown, from: Source['from']) => {
    if (typeof url !== 'string' || url === '' || seen.has(url)) return;
    seen.add(url);
    sources.push({ index: sources.length + 1, url, title: typeof title === 'string' ? title : null, from });
  };
  for (const block of blocks) {
    if (block.type === 'web_search_tool_result' && Array.isArray(block.content)) {
      for (const result of block.content as Array<Record<string, unknown>>) {
        if (result?.type === 'web_search_result') add(result.url, result.title, 'web_search');
      }
    } else if (block.type === 'web_fetch_tool_result') {
      const result = block.content as { type?: unknown; url?: unknown; content?: { title?: unknown } } | null;
      if (result?.type === 'web_fetch_result') add(result.url, result.content?.title, 'web_fetch');
    }
  }
  return sources;
}

/** `[3]`, and lists such as `[1, 4]` or `[2][5]`. */
const MARKER = /\[(\d+(?:\s*,\s*\d+)*)\]/g;

export function citationMarkers(prose: string): number[] {
  const markers: number[] = [];
  for (const match of prose.matchAll(MARKER)) {
    for (const number of (match[1] ?? '').split(',')) {
      const marker = Number(number.trim());
      if (!markers.includes(marker)) markers.push(marker);
    }
  }
  return markers;
}

export function mapCitations(prose: string, blocks: readonly ContentBlock[]): CitationMap {
  const sources = collectSources(blocks);
  const citations = citationMarkers(prose).map((marker) => ({ marker, source: sources[marker - 1] }));
  return {
    sources,
    citations,
    unresolved: citations.filter((citation) => !citation.source).map((citation) => citation.marker),
  };
}
