import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { STATUS } from '../../../src/errors.ts';
import { FEED_LIST } from '../../../src/modules/feeds/feed-catalog.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';

const CHROMIUM = process.env.UMBRA_CHROMIUM ?? '/usr/bin/chromium';
/** Where the screenshots land: kept after the run for a person to look at (.gitignore'd). */
const ARTIFACTS = join(import.meta.dirname, '../../../test-artifacts');

// Without the background-networking flags Chromium reaches for update, sync and field-trial hosts on
// its own; on a closed network those calls fail and would muddy "no request left the host".
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('API reference page in a browser', () => {
  it('should render umbra’s reference offline: feeds folded once, a gRPC section with the status table, no console errors', async (t) => {
    assert.ok(
      existsSync(CHROMIUM),
      `Chromium is missing at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (Debian), or set UMBRA_CHROMIUM to its path.`,
    );
    const profile = mkdtempSync(join(tmpdir(), 'umbra-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1440, height: 1000 },
    });
    t.after(async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    });
    // Built after the browser, so the browser closes first (after-hooks run in order): the app's close
    // would otherwise wait out the connections Chromium keeps open.
    const app = await buildTestApp(t);
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.http.server.address() as { port: number };
    const base = `http://127.0.0.1:${port}`;

    const requests: string[] = [];
    const problems: string[] = [];
    context.on('request', (req) => requests.push(req.url()));
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));

    const started = Date.now();
    const res = await page.goto(`${base}/api/v4/docs`, { waitUntil: 'load' });
    t.diagnostic(`page loaded in ${Date.now() - started} ms`);
    assert.equal(res?.status(), 200);

    assert.match(await page.title(), /umbra/i);
    assert.match(await page.locator('h1').innerText(), /umbra/i);

    // The feeds: one table row per feed, and each operation shape once with {feed} in its path.
    const feeds = page.locator('#feeds');
    assert.ok(await feeds.isVisible(), 'feed group');
    assert.equal(await feeds.locator('table.feeds tbody tr').count(), FEED_LIST.length);
    const feedPaths = await feeds.locator('section.op code.path').allInnerTexts();
    assert.ok(feedPaths.length >= 2 && feedPaths.length < FEED_LIST.length, `feed operations folded: ${feedPaths.join(', ')}`);
    for (const path of feedPaths) assert.match(path, /^\/api\/v4\/feeds\/\{feed\}/);
    assert.match(await feeds.innerText(), /307/);
    assert.match(await feeds.innerText(), /application\/x-ndjson/);

    // gRPC: proto files, reflection, and the status table row for row.
    const grpc = page.locator('#grpc');
    assert.ok(await grpc.isVisible(), 'gRPC section');
    assert.match(await grpc.innerText(), /reflection/i);
    const rows = grpc.locator('table.status-table tbody tr');
    assert.equal(await rows.count(), Object.keys(STATUS).length);
    assert.match(await rows.filter({ hasText: 'CREDITS_EXHAUSTED' }).innerText(), /402\s+FAILED_PRECONDITION/);
    const protoHref = await grpc.locator('ul.files a').first().getAttribute('href');
    assert.ok(protoHref, 'a proto file link');
    const proto = await fetch(new URL(protoHref, base));
    assert.equal(proto.status, 200);
    assert.match(proto.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(await proto.text(), /service ExampleService/);

    mkdirSync(ARTIFACTS, { recursive: true });
    const top = join(ARTIFACTS, 'reference-page.png');
    const full = join(ARTIFACTS, 'reference-page-full.png');
    await page.screenshot({ path: top });
    await page.screenshot({ path: full, fullPage: true });
    const feedsShot = join(ARTIFACTS, 'reference-page-feeds.png');
    await feeds.locator('h2').scrollIntoViewIfNeeded();
    await page.screenshot({ path: feedsShot });
    const grpcShot = join(ARTIFACTS, 'reference-page-grpc.png');
    await grpc.locator('#grpc-reflection').scrollIntoViewIfNeeded();
    await page.screenshot({ path: grpcShot });
    t.diagnostic(`screenshots: ${top} ${feedsShot} ${grpcShot} ${full}`);

    const foreign = requests.filter((url) => new URL(url).hostname !== '127.0.0.1');
    assert.deepEqual(foreign, [], 'every request stays on 127.0.0.1');
    assert.ok(requests.length > 0);
    assert.deepEqual(problems, []);
  });
});
