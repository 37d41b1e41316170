import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { Metrics } from './metrics.ts';

describe(Metrics.name, () => {
  it("should expose the same text and JSON as prom-client's own Counter and Histogram", async () => {
    const metrics = new Metrics();
    const registry = new Registry();
    const labelNames = ['operation', 'status'] as const;
    const requests = new Counter({
      name: 'umbra_http_requests_total',
      help: 'HTTP requests by operation and status',
      labelNames,
      registers: [registry],
    });
    const latency = new Histogram({
      name: 'umbra_http_request_duration_seconds',
      help: 'HTTP request latency by operation and status',
      labelNames,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    const seconds = [0.0001, 0.0005, 0.0007, 0.003, 0.02, 0.7, 2.5, 9];
    const observe = (operation: string, status: number, value: number) => {
      metrics.observe(operation, status, value);
      requests.inc({ operation, status: String(status) });
      latency.observe({ operation, status: String(status) }, value);
    };
    for (const operation of ['lookup.ip', 'health'])
      for (const status of [200, 429]) for (const s of seconds) observe(operation, status, s);
    const ours = async () => {
      const text = await metrics.registry.metrics();
      return text.slice(0, text.indexOf('# HELP umbra_credits_charged_total')).trimEnd();
    };
    assert.equal(await ours(), (await registry.metrics()).trimEnd());
    observe('lookup.ip', 200, 0.001);
    assert.equal(await ours(), (await registry.metrics()).trimEnd(), 'counts handed over at the previous scrape are not counted twice');
    const json = (await metrics.registry.getMetricsAsJSON()).filter((m) => m.name.startsWith('umbra_http_request'));
    assert.deepEqual(json, await registry.getMetricsAsJSON());
  });

  it('should still be scraped, with the last snapshot counts, while the snapshot catalog cannot be read', async () => {
    const metrics = new Metrics();
    let down = false;
    metrics.snapshotCounter = async () => {
      if (down) throw new Error('The database is unavailable right now (ECONNREFUSED). Retry shortly.');
      return [{ feed: 'proxies', kind: 'hourly', count: 3 }];
    };
    metrics.storeVitals = () => ({ unsentCredits: 0, databaseUnavailable: down ? 1 : 0 });
    assert.match(await metrics.registry.metrics(), /^umbra_export_snapshots\{feed="proxies",kind="hourly"\} 3$/m);
    down = true;
    const text = await metrics.registry.metrics();
    assert.match(text, /^umbra_database_unavailable 1$/m, 'the scrape says the database is down');
    assert.match(text, /^umbra_export_snapshots\{feed="proxies",kind="hourly"\} 3$/m);
  });
});
