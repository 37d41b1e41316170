import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tinyDataset } from '../../../test/helpers/tiny-dataset.ts';
import type { FeedId } from '../feeds/feed-catalog.ts';
import { dataStatus } from './data-status.ts';
import type { IntelList } from './lists/intel-list.ts';

const HOUR = 3_600_000;
const T = Date.UTC(2026, 10, 28, 7, 0, 0);

describe(dataStatus.name, () => {
  it("should show each list's publisher time and say which feeds hold the demo simulator's records", async () => {
    const tor: IntelList = {
      kind: 'TOR_NODE',
      provider: 'TOR',
      version: '0123456789abcdef',
      imported_at: T / 1000,
      published_at: Date.UTC(2022, 0, 18) / 1000,
      published_from: 'option',
      format: 'tor-bulk-exit-list',
      cidrs: ['185.220.101.18/32'],
    };
    const lines: Record<string, Record<number, string[]>> = {
      proxies: {
        [T - HOUR]: ['{"ip":"192.0.2.1","provider":"ACME"}'],
        [T]: ['{"ip":"192.0.2.1","provider":"DEMO_PROXY_A","simulated":true}'],
      },
      ja4t: { [T]: ['{"ip":"192.0.2.1","provider":"ACME"}'] },
      anonymizers: {},
    };
    const feedLog = {
      hours: async (feed: FeedId) =>
        Object.keys(lines[feed] ?? {})
          .map(Number)
          .sort(),
      readHour: async function* (feed: FeedId, hour: number) {
        yield* lines[feed]?.[hour] ?? [];
      },
    };
    const s = await dataStatus(tinyDataset.info, { lists: { all: async () => [tor] }, overlays: { all: async () => [] }, feedLog }, [
      'proxies',
      'ja4t',
      'anonymizers',
    ]);
    assert.deepEqual(s.lists, [{ ...tor, cidrs: 1 }]);
    assert.deepEqual(
      s.feeds.map((f) => [f.feed, f.hours, f.simulated]),
      [
        ['proxies', 2, true],
        ['ja4t', 1, false],
        ['anonymizers', 0, false],
      ],
    );
  });
});
