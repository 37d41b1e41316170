import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BENIGN_CAP, recency, riskScore, signalFactor, type RiskSignal } from './risk-score.ts';

const NOW = 1_795_000_000;
const DAY = 86_400;
const list = (value: string): RiskSignal => ({ value, last_seen: undefined, count: 1 });
const seen = (value: string, daysAgo: number, count = 1): RiskSignal => ({ value, last_seen: NOW - daysAgo * DAY, count });

// The worked examples of docs/intelligence.md ("Risk score"); change both together.
const EXAMPLES: ReadonlyArray<{ name: string; categories: RiskSignal[]; behaviors: RiskSignal[]; score: number }> = [
  { name: 'nothing known', categories: [], behaviors: [], score: 0 },
  {
    name: 'verified Googlebot that crawls with a library',
    categories: [list('SEARCH_ENGINE')],
    behaviors: [seen('ACTIVE_CRAWLER', 0, 500), seen('PROGRAMMATIC_TRAFFIC', 0, 500)],
    score: 0,
  },
  {
    name: 'uptime monitor with a stray torrent sighting, capped',
    categories: [list('UPTIME_MONITOR')],
    behaviors: [seen('TORRENTING', 0, 3)],
    score: BENIGN_CAP,
  },
  { name: 'Tor exit from the list', categories: [list('TOR_NODE')], behaviors: [], score: 60 },
  { name: 'Apple private relay egress', categories: [list('PRIVATE_RELAY')], behaviors: [], score: 10 },
  { name: 'residential proxy seen today', categories: [seen('RESIDENTIAL_PROXY', 0)], behaviors: [], score: 45 },
  { name: 'residential proxy last seen 60 days ago', categories: [seen('RESIDENTIAL_PROXY', 60)], behaviors: [], score: 11 },
  // 60 + 0.25 × 20 + 5·log10(11) = 60 + 5 + 5.21
  {
    name: 'Tor exit that also scans with curl (10 requests)',
    categories: [list('TOR_NODE')],
    behaviors: [seen('PROGRAMMATIC_TRAFFIC', 0, 10)],
    score: 70,
  },
  // max(80, 85) + 0.25 × 80 → capped at 100
  {
    name: 'botnet member dropping payloads today',
    categories: [seen('BOTNET', 0)],
    behaviors: [seen('COMPROMISED_DEVICE', 0, 4), seen('MALICIOUS_TRAFFIC', 0, 12)],
    score: 100,
  },
  // 80 + 5·log10(2) = 81.5
  { name: 'one exploit attempt today', categories: [], behaviors: [seen('MALICIOUS_TRAFFIC', 0, 1)], score: 82 },
  // 80 × 0.5 + 5·log10(2) = 41.5 → 42 (half-life 30 days)
  { name: 'one exploit attempt 30 days ago', categories: [], behaviors: [seen('MALICIOUS_TRAFFIC', 30, 1)], score: 42 },
  // 80 × 0.125 + 5·log10(2) = 11.5 → 12
  { name: 'one exploit attempt 90 days ago', categories: [], behaviors: [seen('MALICIOUS_TRAFFIC', 90, 1)], score: 12 },
  // 10 + 5·log10(1001) = 25.0 vs 10 + 5·log10(2) = 11.5: volume on a log scale, capped at 15
  { name: 'torrent peer seen 1000 times', categories: [], behaviors: [seen('TORRENTING', 0, 1000)], score: 25 },
  { name: 'torrent peer seen once', categories: [], behaviors: [seen('TORRENTING', 0, 1)], score: 12 },
  // 75 + 0.25 × 45 + 5·log10(41) = 75 + 11.25 + 8.06
  {
    name: 'credential stuffer behind a residential proxy',
    categories: [seen('RESIDENTIAL_PROXY', 0)],
    behaviors: [seen('CREDENTIAL_STUFFING', 0, 40)],
    score: 94,
  },
];

describe('riskScore', () => {
  for (const ex of EXAMPLES) {
    it(`should score ${ex.name} as ${ex.score}`, () => {
      assert.equal(riskScore(ex.categories, ex.behaviors, NOW).score, ex.score);
    });
  }

  it('should return its parts: the winning category, behaviour, volume and whether the benign cap applied', () => {
    const parts = riskScore([list('TOR_NODE')], [seen('PROGRAMMATIC_TRAFFIC', 0, 10)], NOW);
    assert.deepEqual(parts, {
      score: 70,
      category: { value: 60, from: 'TOR_NODE' },
      behavior: { value: 20, from: 'PROGRAMMATIC_TRAFFIC' },
      volume: { value: 5.21, observations: 10 },
      benign_cap: false,
    });
    assert.equal(riskScore([list('UPTIME_MONITOR')], [seen('TORRENTING', 0, 3)], NOW).benign_cap, true);
  });

  it('should let abusive behaviour through the benign cap (a verified crawler address that attacks is not benign)', () => {
    assert.ok(riskScore([list('SEARCH_ENGINE')], [seen('MALICIOUS_TRAFFIC', 0, 5)], NOW).score >= 80);
  });

  it('should halve the weight every 30 days and never exceed 1 for future timestamps', () => {
    assert.equal(recency(NOW, NOW), 1);
    assert.equal(recency(NOW - 30 * DAY, NOW), 0.5);
    assert.equal(recency(NOW - 60 * DAY, NOW), 0.25);
    assert.equal(recency(NOW + DAY, NOW), 1);
    assert.equal(recency(undefined, NOW), 1);
  });

  it('should stay within 0..100 for any mix', () => {
    const all = [
      'COMPROMISED_DEVICE',
      'MALICIOUS_TRAFFIC',
      'CREDENTIAL_STUFFING',
      'ACTIVE_CRAWLER',
      'PROGRAMMATIC_TRAFFIC',
      'TOR_USER',
      'TORRENTING',
    ];
    const s = riskScore(
      [list('BOTNET'), list('TOR_NODE')],
      all.map((b) => seen(b, 0, 1e9)),
      NOW,
    ).score;
    assert.equal(s, 100);
  });
});

describe(signalFactor.name, () => {
  it("should weigh list membership by its list's strength, and take the larger of it and a feed sighting's recency", () => {
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: undefined, count: 0 }, NOW), 1, 'an overlay alone: current');
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: undefined, count: 0, strength: 0.25 }, NOW), 0.25);
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: NOW - 30 * DAY, count: 1, strength: 0.25 }, NOW), 0.5);
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: NOW - 90 * DAY, count: 1, strength: 0.25 }, NOW), 0.25);
    const stale = riskScore([{ value: 'TOR_NODE', last_seen: undefined, count: 0, strength: 0.5 }], [], NOW);
    assert.deepEqual([stale.score, stale.category], [30, { value: 30, from: 'TOR_NODE' }]);
  });
});
