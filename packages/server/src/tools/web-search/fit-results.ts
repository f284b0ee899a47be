/**
 * Search hits fitted to a call's share of the turn's input headroom (agent/context-budget.ts),
 * counted as `resultCharacters` counts them: each result's URL, title, page age and text. Text
 * gives way first; a result whose URL and title, with a little text, no longer fit is dropped
 * whole (a cut URL would point elsewhere, and a result with neither text nor room for it tells
 * the model little). Hits are taken in rank order, so the best ones are the ones kept.
 */
import type { SearchHit } from './search-provider.js';

/**
 * Text each kept result shows at least (all of it, when shorter): a sentence or two, enough for
 * the model to judge whether the page is worth a fetch.
 */
export const MIN_RESULT_TEXT = 100;

/**
 * Characters a result's URL, title and page age are assumed to take before the hits are known:
 * a URL and a title of common length.
 */
const TYPICAL_LABEL_CHARACTERS = 100;

/**
 * The smallest share a search is made for. Below it not even one result of common size would
 * fit, so the tool answers without searching, as web fetch does for a share too small for a page.
 */
export const MIN_SEARCH_CHARACTERS = TYPICAL_LABEL_CHARACTERS + MIN_RESULT_TEXT;

/** The hits that fit in `share` characters, in rank order, each text cut to at most `maxText`. */
export function fitResults(hits: readonly SearchHit[], share: number, maxText: number): SearchHit[] {
  const kept: SearchHit[] = [];
  let floor = 0;
  for (const hit of hits) {
    const need = labelCharacters(hit) + Math.min(hit.content.length, MIN_RESULT_TEXT, maxText);
    // A later, shorter hit may still fit where this one does not.
    if (floor + need > share) continue;
    kept.push(hit);
    floor += need;
  }
  const textRoom = share - kept.reduce((sum, hit) => sum + labelCharacters(hit), 0);
  const allotted = shareText(
    kept.map((hit) => Math.min(hit.content.length, maxText)),
    textRoom,
  );
  return kept.map((hit, index) => ({ ...hit, content: hit.content.slice(0, allotted[index]) }));
}

export function labelCharacters(hit: SearchHit): number {
  return hit.url.length + hit.title.length + (hit.pageAge?.length ?? 0);
}

/**
 * `room` characters of text divided across texts of the given lengths: evenly, except that a
 * text shorter than its even part keeps its whole length and leaves the rest to the others.
 */
function shareText(lengths: readonly number[], room: number): number[] {
  const allotted = new Array<number>(lengths.length).fill(0);
  const shortestFirst = lengths.map((length, index) => ({ length, index })).sort((a, b) => a.length - b.length);
  let left = room;
  shortestFirst.forEach(({ length, index }, position) => {
    const even = Math.floor(left / (shortestFirst.length - position));
    allotted[index] = Math.max(0, Math.min(length, even));
    left -= allotted[index]!;
  });
  return allotted;
}
