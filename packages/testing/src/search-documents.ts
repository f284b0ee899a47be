/**
 * A small documents folder for the web search tests, as the folder provider indexes it: Markdown
 * with front matter, plain text, HTML with a canonical link, and files the index skips.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A web_search_result as the service answers with it. */
export interface WebSearchResult {
  type: string;
  url: string;
  title: string;
  page_age: string | null;
  encrypted_content: string;
}

export const OTTERS_MD = `---
title: Sea otters
date: 2024-05-01
---
# Sea otters

Sea otters hold hands while they sleep so that they do not drift apart.

${'Kelp forests shelter many animals along the coast. '.repeat(30)}

They use stones as tools to open shells.
`;

const BEAVERS_TXT = 'Beavers\n\nBeavers build dams across rivers. An otter sometimes visits the pond.\n';

const RIVERS_HTML = `<html><head><title>Rivers of the world</title><link rel="canonical" href="https://rivers.example.org/world">
<meta property="article:published_time" content="2023-02-03T10:00:00Z"></head>
<body><nav>Home | About</nav><article><h1>Rivers</h1><p>Rivers flow to the sea. Salmon swim upstream to spawn in rivers every autumn.</p>
<p>Great rivers carry silt to their deltas.</p></article></body></html>`;

/** A fresh folder with three indexable documents (one in a subfolder) and two files the index skips. */
export function documentsFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-search-docs-'));
  writeFileSync(join(folder, 'otters.md'), OTTERS_MD);
  writeFileSync(join(folder, 'beavers.txt'), BEAVERS_TXT);
  mkdirSync(join(folder, 'geography'));
  writeFileSync(join(folder, 'geography', 'rivers.html'), RIVERS_HTML);
  // Not indexed: other extensions, and dot files.
  writeFileSync(join(folder, 'data.json'), '{"otters": true}');
  writeFileSync(join(folder, '.draft.md'), '# Otters draft');
  return folder;
}
