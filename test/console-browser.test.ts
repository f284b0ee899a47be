/**
 * The operator's console (issue 37) in a real browser: headless Chromium (the system's package,
 * driven by puppeteer-core; skipped, saying why, where none is installed). The page loads from
 * the service with nothing from outside, refuses a key without admin, opens with an admin key,
 * shows in Live a request sent meanwhile, shows usage per key with its quota and the engines, and
 * its playground streams a scripted reply with a search result and a tool call.
 *
 * With CONSOLE_SCREENSHOTS=<folder> it saves a PNG of each view there: docs/console.md's are
 * made so (`CONSOLE_SCREENSHOTS=docs/console node --import tsx --test test/console-browser.test.ts`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import {
  chromiumMissing,
  launchChromium,
  postJson,
  scriptedModels,
  startService,
  type RunningService,
} from '@model-messages/testing';

const ADMIN = 'mms-console-admin-0123456789abcdef';
const TEAM = 'mms-console-team-0123456789abcdef';
const hash = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;
const missing = chromiumMissing();
const screenshots = process.env.CONSOLE_SCREENSHOTS;
// The real root also when this file runs compiled from .cache/compiled/ (test/mms-command.ts).
const ROOT = dirname(realpathSync(fileURLToPath(new URL('../package.json', import.meta.url))));

/** The console is served from the build: build it first when its sources are newer (a file run alone after an edit). */
function buildConsoleIfStale(): void {
  const newest = (folder: string): number =>
    Math.max(
      0,
      ...readdirSync(folder, { withFileTypes: true }).map((entry) =>
        entry.isDirectory() ? newest(join(folder, entry.name)) : statSync(join(folder, entry.name)).mtimeMs,
      ),
    );
  const built = statSync(join(ROOT, 'packages/server/dist/console/main.js'), { throwIfNoEntry: false });
  if (built === undefined || built.mtimeMs < newest(join(ROOT, 'packages/server/console')))
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

async function shoot(page: Page, name: string): Promise<void> {
  if (screenshots === undefined) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`) as `${string}.png`, fullPage: true });
}

describe('the console in a browser', { skip: missing }, () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  /** What the page asked for from elsewhere than the service: nothing, it loads its own files only. */
  const foreign: string[] = [];

  before(async () => {
    buildConsoleIfStale();
    const folder = mkdtempSync(join(tmpdir(), 'mms-console-'));
    mkdirSync(join(folder, 'documents'));
    writeFileSync(
      join(folder, 'documents', 'consoles.md'),
      '---\nurl: https://docs.example/consoles\ntitle: Operator consoles\n---\nAn operator console shows live requests and usage.\n',
    );
    writeFileSync(
      join(folder, 'script.json'),
      JSON.stringify([
        {
          when: 'find the console',
          steps: [
            [{ type: 'server_tool_use', name: 'web_search', input: { query: 'operator console' } }],
            [
              { type: 'text', text: 'Found a page on consoles; now the weather.' },
              { type: 'tool_use', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
            ],
          ],
        },
      ]),
    );
    service = await startService(
      {
        models: scriptedModels({ script: 'script.json', tokenDelayMs: 5 }),
        keys: [
          { id: 'ops', hash: hash(ADMIN), admin: true },
          { id: 'team', hash: hash(TEAM), limits: { requestsPerMinute: 600, tokensPerDay: 50_000 } },
        ],
        serverTools: {
          webSearch: { provider: { type: 'folder', folder: join(folder, 'documents'), watch: false } },
        },
      },
      folder,
    );
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('request', (request) => {
      if (!request.url().startsWith(service.baseURL)) foreign.push(request.url());
    });
  });
  after(async () => {
    await browser?.close();
    await service?.close();
  });

  test('the page loads from the service alone and refuses a key without admin', async () => {
    const response = await page.goto(`${service.baseURL}/console`);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    await page.waitForSelector('#admin-key');
    await shoot(page, 'key');
    await page.type('#admin-key', TEAM);
    await page.click('button[type=submit]');
    const problem = await page.waitForSelector('#key-problem');
    assert.match((await problem!.evaluate((element) => element.textContent)) ?? '', /not an admin key/);
    assert.equal(await page.$('nav.tabs'), null, 'no view opened');
  });

  test('an admin key opens Live, which shows a request sent meanwhile', async () => {
    // The refused key is still in the field: select it and type over it.
    await page.click('#admin-key', { clickCount: 3 });
    await page.type('#admin-key', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForSelector('#live-state.ok');
    // A little traffic first, a failure among it, as an operator would see it.
    for (const [key, model] of [
      [ADMIN, 'large'],
      [TEAM, 'small'],
      [TEAM, 'no-such-model'],
    ] as const)
      await postJson(
        service,
        '/v1/messages',
        { model, max_tokens: 32, messages: [{ role: 'user', content: 'a little traffic' }] },
        { 'x-api-key': key },
      );
    const sent = await postJson(
      service,
      '/v1/messages',
      { model: 'mid', max_tokens: 32, messages: [{ role: 'user', content: 'hello from the test' }] },
      { 'x-api-key': TEAM },
    );
    assert.equal(sent.status, 200);
    const requestId = sent.headers.get('request-id')!;
    const row = await page.waitForSelector(`#live-table tr[data-request-id="${requestId}"]`);
    const cells = await row!.$$eval('td', (tds) => tds.map((td) => td.textContent?.trim() ?? ''));
    assert.equal(cells[1], 'team');
    assert.equal(cells[2], 'mid-newer');
    assert.equal(cells[3], 'scripted');
    assert.equal(cells[4], '200');
    await shoot(page, 'live');
  });

  test("Usage shows the key's tokens and what is left of its day quota; Engines every model", async () => {
    await page.click('#tab-usage');
    await page.waitForSelector('#usage-table tbody tr');
    const rows = await page.$$eval('#usage-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')),
    );
    const team = rows.find((cells) => cells[0] === 'team' && cells[1] === 'mid-newer');
    assert.equal(team?.[2], '1', JSON.stringify(rows));
    await page.waitForSelector('#keys-table');
    const keys = await page.$eval('#keys-table', (element) => element.textContent ?? '');
    assert.match(keys, /50,000 tokens \/ day \(UTC\)/);
    await shoot(page, 'usage');
    await page.click('#tab-engines');
    await page.waitForSelector('#engines section[data-model="mid-newer"]');
    const models = await page.$$eval('#engines section', (sections) =>
      sections.map((section) => section.dataset.model),
    );
    assert.deepEqual(
      models,
      scriptedModels().map((model) => model.id),
    );
    await shoot(page, 'engines');
  });

  test('the playground streams a reply with a search result as a link and a tool call with its input', async () => {
    await page.click('#tab-playground');
    // Preact sets an option's value as a property, not an attribute: no CSS selector sees it.
    // (Functions run in the page are given as text: the tests' types have no DOM.)
    await page.waitForFunction(
      "[...document.querySelectorAll('#playground-model option')].some((option) => option.value === 'mid-newer')",
    );
    await page.select('#playground-model', 'mid-newer');
    await page.type('#playground-system', 'You answer briefly.');
    await page.type('.playground-message', 'find the console, then the weather');
    await page.click('#tool-web_search');
    await page.type(
      '#playground-tools',
      JSON.stringify([{ name: 'get_weather', description: 'The weather.', input_schema: { type: 'object' } }]),
    );
    await page.click('#playground-send');
    await page.waitForFunction("document.querySelector('#reply-usage')?.textContent.includes('stop: tool_use')", {
      timeout: 20_000,
    });
    const link = await page.$eval('[data-result="web_search"] a', (anchor) => ({
      href: anchor.getAttribute('href'),
      text: anchor.textContent,
    }));
    assert.deepEqual(link, { href: 'https://docs.example/consoles', text: 'Operator consoles' });
    const call = await page.$eval('[data-tool="get_weather"] pre', (pre) => pre.textContent ?? '');
    assert.deepEqual(JSON.parse(call), { city: 'Paris', unit: 'celsius' });
    const text = await page.$eval('#reply .block.text', (block) => block.textContent);
    assert.equal(text, 'Found a page on consoles; now the weather.');
    await shoot(page, 'playground');
    assert.deepEqual(foreign, [], 'the page asked for nothing outside the service');
  });
});
