/**
 * The part of a long document a model should read for a query: the paragraphs that hold the
 * most of the query's terms, in document order, within a character budget. A whole document
 * would crowd the context (spec, Limits: whole pages exceed the window); the first N characters
 * would often miss the part that matched.
 */

const GAP = '\n\n[...]\n\n';

/** `terms`: the lower-case terms that matched (the index's own tokens). */
export function passageExcerpt(text: string, terms: readonly string[], maxCharacters: number): string {
  if (text.length <= maxCharacters) return text;
  if (maxCharacters <= 0) return '';
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '');
  const wanted = [...new Set(terms.map((term) => term.toLowerCase()).filter((term) => term !== ''))];
  const scored = paragraphs.map((paragraph, index) => ({
    index,
    paragraph,
    score: score(paragraph.toLowerCase(), wanted),
  }));
  const ranked = scored.filter((entry) => entry.score > 0).sort((a, b) => b.score - a.score || a.index - b.index);
  // Nothing matched literally (a fuzzy or prefix match): the opening is the best guess.
  if (ranked.length === 0) return cut(text, 0, maxCharacters);
  const chosen: typeof ranked = [];
  let used = 0;
  for (const entry of ranked) {
    const cost = entry.paragraph.length + (chosen.length > 0 ? GAP.length : 0);
    if (used + cost > maxCharacters) {
      // The best paragraph alone is too long: the window of it around its first match.
      if (chosen.length === 0) return windowAround(entry.paragraph, wanted, maxCharacters);
      continue;
    }
    chosen.push(entry);
    used += cost;
  }
  return chosen
    .sort((a, b) => a.index - b.index)
    .map((entry) => entry.paragraph)
    .join(GAP);
}

/** Distinct terms count most, then how often they occur. */
function score(lowerParagraph: string, terms: readonly string[]): number {
  let distinct = 0;
  let occurrences = 0;
  for (const term of terms) {
    let at = lowerParagraph.indexOf(term);
    if (at === -1) continue;
    distinct += 1;
    while (at !== -1 && occurrences < 1000) {
      occurrences += 1;
      at = lowerParagraph.indexOf(term, at + term.length);
    }
  }
  return distinct * 1000 + occurrences;
}

function windowAround(paragraph: string, terms: readonly string[], maxCharacters: number): string {
  const lower = paragraph.toLowerCase();
  const first = Math.min(...terms.map((term) => lower.indexOf(term)).filter((at) => at !== -1));
  const start = Math.max(0, Math.min(first - Math.floor(maxCharacters / 4), paragraph.length - maxCharacters));
  return cut(paragraph, start, maxCharacters);
}

function cut(text: string, start: number, maxCharacters: number): string {
  return text.slice(start, start + maxCharacters);
}
