import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BENIGN_CAP, recency, riskScore, signalFactor, volumeFactor, type RiskContext, type RiskSignal } from './risk-score.ts';

const NOW = 1_795_000_000;
const DAY = 86_400;
const list = (value: string): RiskSignal => ({ value, last_seen: undefined });
const seen = (value: string, daysAgo: number): RiskSignal => ({ value, last_seen: NOW - daysAgo * DAY });
const on = (network_type: string, cgnat = false): RiskContext => ({ network_type, cgnat });

interface Example {
  name: string;
  categories: RiskSignal[];
  behaviors: RiskSignal[];
  requests: number;
  context?: RiskContext;
  score: number;
}

// The worked examples of docs/intelligence.md ("Risk score"), each worked by hand there; change both
// together. v(n) = 0.55 + 0.45 × min(1, log10(1 + n) / 2): v(1) = 0.6177, v(10) = 0.7843, v(27) = 0.8756,
// v(40) = 0.9129, v(12) = 0.8006, v(3) = 0.6855.
const EXAMPLES: readonly Example[] = [
  { name: 'nothing known, network unknown to the caller', categories: [], behaviors: [], requests: 0, score: 0 },
  { name: 'datacenter address, nothing observed', categories: [], behaviors: [], requests: 0, context: on('DATACENTER'), score: 15 },
  { name: 'unclassified network, nothing observed', categories: [], behaviors: [], requests: 0, context: on('UNKNOWN'), score: 0 },
  { name: 'home address, nothing observed', categories: [], behaviors: [], requests: 0, context: on('RESIDENTIAL'), score: 5 },
  { name: 'mobile address, nothing observed', categories: [], behaviors: [], requests: 0, context: on('MOBILE'), score: 3 },
  {
    name: 'verified Googlebot on a datacenter network, crawling with a library (500 requests)',
    categories: [list('SEARCH_ENGINE')],
    behaviors: [seen('ACTIVE_CRAWLER', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 500,
    context: on('DATACENTER'),
    score: 0,
  },
  // 10 × v(3) = 6.85 → 7, capped
  {
    name: 'uptime monitor with a stray torrent sighting, capped',
    categories: [list('UPTIME_MONITOR')],
    behaviors: [seen('TORRENTING', 0)],
    requests: 3,
    score: BENIGN_CAP,
  },
  { name: 'Tor exit from the list', categories: [list('TOR_NODE')], behaviors: [], requests: 0, score: 60 },
  // 15 + 0.85 × 60 = 66
  {
    name: 'Tor exit on a datacenter network',
    categories: [list('TOR_NODE')],
    behaviors: [],
    requests: 0,
    context: on('DATACENTER'),
    score: 66,
  },
  { name: 'Apple private relay egress', categories: [list('PRIVATE_RELAY')], behaviors: [], requests: 0, score: 10 },
  { name: 'residential proxy seen today', categories: [seen('RESIDENTIAL_PROXY', 0)], behaviors: [], requests: 0, score: 45 },
  { name: 'residential proxy last seen 60 days ago', categories: [seen('RESIDENTIAL_PROXY', 60)], behaviors: [], requests: 0, score: 11 },
  // evidence = 20 × v(10) × 1 × 0.6 (shared: Tor) = 9.41; 60 + 0.25 × 9.41 = 62.35
  {
    name: 'Tor exit that also scans with curl (10 requests)',
    categories: [list('TOR_NODE')],
    behaviors: [seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 10,
    score: 62,
  },
  // evidence = 85 × v(12) × 1.15 = 78.26; 80 + 0.25 × 78.26 = 99.57
  {
    name: 'botnet member dropping payloads today (12 requests)',
    categories: [seen('BOTNET', 0)],
    behaviors: [seen('COMPROMISED_DEVICE', 0), seen('MALICIOUS_TRAFFIC', 0)],
    requests: 12,
    score: 100,
  },
  // evidence = 80 × v(1) = 49.42; 5 + 0.95 × 49.42 = 51.95
  {
    name: 'home address, one exploit request with a browser User-Agent',
    categories: [],
    behaviors: [seen('MALICIOUS_TRAFFIC', 0)],
    requests: 1,
    context: on('RESIDENTIAL'),
    score: 52,
  },
  // evidence = 80 × v(1) × 1.15 (two behaviours) = 56.83; 5 + 0.95 × 56.83 = 58.99
  {
    name: 'home address, one exploit request with curl',
    categories: [],
    behaviors: [seen('MALICIOUS_TRAFFIC', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 1,
    context: on('RESIDENTIAL'),
    score: 59,
  },
  // evidence = 40 × v(1) = 24.71; 5 + 0.95 × 24.71 = 28.47
  {
    name: 'home address, one exploit request 30 days ago',
    categories: [],
    behaviors: [seen('MALICIOUS_TRAFFIC', 30)],
    requests: 1,
    context: on('RESIDENTIAL'),
    score: 28,
  },
  // evidence = 10 × v(1) = 6.18; 5 + 0.95 × 6.18 = 10.87
  {
    name: 'home address, one exploit request 90 days ago',
    categories: [],
    behaviors: [seen('MALICIOUS_TRAFFIC', 90)],
    requests: 1,
    context: on('RESIDENTIAL'),
    score: 11,
  },
  // evidence = 56.83 × 0.6 = 34.10; base = 34.10 + 0.25 × 10 = 36.60; 15 + 0.85 × 36.60 = 46.11
  {
    name: 'private relay egress on a datacenter network, one exploit request with curl',
    categories: [list('PRIVATE_RELAY')],
    behaviors: [seen('MALICIOUS_TRAFFIC', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 1,
    context: on('DATACENTER'),
    score: 46,
  },
  // 3 + 0.97 × 34.10 = 36.08
  {
    name: 'mobile carrier address, one exploit request with curl',
    categories: [],
    behaviors: [seen('MALICIOUS_TRAFFIC', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 1,
    context: on('MOBILE'),
    score: 36,
  },
  // no prior (UNKNOWN) + 34.10
  {
    name: 'address in CGNAT space, one exploit request with curl',
    categories: [],
    behaviors: [seen('MALICIOUS_TRAFFIC', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 1,
    context: on('UNKNOWN', true),
    score: 34,
  },
  // evidence = 80 × v(27) × 1.15 = 80.56; 15 + 0.85 × 80.56 = 83.47
  {
    name: 'datacenter scanner, 27 exploit requests with scanner User-Agents',
    categories: [],
    behaviors: [seen('MALICIOUS_TRAFFIC', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 27,
    context: on('DATACENTER'),
    score: 83,
  },
  // 10 × v(1) = 6.18 and 10 × v(1000) = 10: volume on a log scale, at most 1
  { name: 'torrent peer seen once', categories: [], behaviors: [seen('TORRENTING', 0)], requests: 1, score: 6 },
  { name: 'torrent peer seen 1000 times', categories: [], behaviors: [seen('TORRENTING', 0)], requests: 1000, score: 10 },
  // evidence = 75 × v(40) × 1.15 × 0.6 = 47.24; base = 47.24 + 0.25 × 45 = 58.49; 5 + 0.95 × 58.49 = 60.57
  {
    name: 'credential stuffer (40 attempts with python-requests) behind a residential proxy on a home network',
    categories: [seen('RESIDENTIAL_PROXY', 0)],
    behaviors: [seen('CREDENTIAL_STUFFING', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
    requests: 40,
    context: on('RESIDENTIAL'),
    score: 61,
  },
];

const score = (name: string) => {
  const ex = EXAMPLES.find((e) => e.name === name)!;
  return riskScore(ex.categories, ex.behaviors, ex.requests, NOW, ex.context).score;
};

describe('riskScore', () => {
  for (const ex of EXAMPLES) {
    it(`should score ${ex.name} as ${ex.score}`, () => {
      assert.equal(riskScore(ex.categories, ex.behaviors, ex.requests, NOW, ex.context).score, ex.score);
    });
  }

  it('should order the classes an analyst ranks: scanner, home with one exploit, shared with one exploit, nothing seen by network, verified crawler', () => {
    const ranked = [
      ['datacenter scanner, 27 exploit requests with scanner User-Agents'],
      ['home address, one exploit request with curl'],
      [
        'private relay egress on a datacenter network, one exploit request with curl',
        'mobile carrier address, one exploit request with curl',
        'address in CGNAT space, one exploit request with curl',
      ],
      ['datacenter address, nothing observed'],
      ['home address, nothing observed'],
      ['mobile address, nothing observed'],
      ['verified Googlebot on a datacenter network, crawling with a library (500 requests)'],
    ];
    for (let i = 0; i + 1 < ranked.length; i++) {
      const lowest = Math.min(...ranked[i]!.map(score));
      const highest = Math.max(...ranked[i + 1]!.map(score));
      assert.ok(lowest > highest, `${ranked[i]} (${lowest}) above ${ranked[i + 1]} (${highest})`);
    }
  });

  it('should score a shared address below a single-user one for the same activity, whatever made it shared', () => {
    const activity = [seen('MALICIOUS_TRAFFIC', 0), seen('PROGRAMMATIC_TRAFFIC', 0)];
    const single = riskScore([], activity, 5, NOW, on('CORPORATE')).score;
    for (const shared of [
      riskScore([], activity, 5, NOW, on('CORPORATE', true)),
      riskScore([], activity, 5, NOW, on('MOBILE')),
      riskScore([list('PRIVATE_RELAY')], activity, 5, NOW, on('CORPORATE')),
      riskScore([list('COMMERCIAL_VPN')], activity, 5, NOW, on('CORPORATE')),
    ]) {
      assert.equal(shared.shared.value, 0.6);
      assert.ok(shared.score < single, `${shared.shared.from}: ${shared.score} < ${single}`);
    }
  });

  it('should grow with requests and with distinct behaviours, and never pass 100', () => {
    const one = riskScore([], [seen('MALICIOUS_TRAFFIC', 0)], 1, NOW).score;
    const many = riskScore([], [seen('MALICIOUS_TRAFFIC', 0)], 50, NOW).score;
    const diverse = riskScore([], [seen('MALICIOUS_TRAFFIC', 0), seen('CREDENTIAL_STUFFING', 0), seen('ACTIVE_CRAWLER', 0)], 50, NOW).score;
    assert.ok(one < many && many < diverse, `${one} < ${many} < ${diverse}`);
    assert.equal(volumeFactor(0), 0.55);
    assert.equal(volumeFactor(99), 1);
    assert.equal(volumeFactor(1e9), 1);
  });

  it('should return its parts', () => {
    const parts = riskScore(
      [list('PRIVATE_RELAY')],
      [seen('MALICIOUS_TRAFFIC', 0), seen('PROGRAMMATIC_TRAFFIC', 0)],
      1,
      NOW,
      on('DATACENTER'),
    );
    assert.deepEqual(parts, {
      score: 46,
      prior: { value: 15, from: 'DATACENTER' },
      category: { value: 10, from: 'PRIVATE_RELAY' },
      behavior: { value: 80, from: 'MALICIOUS_TRAFFIC' },
      volume: { value: 0.62, observations: 1 },
      diversity: { value: 1.15, behaviors: 2 },
      shared: { value: 0.6, from: 'PRIVATE_RELAY' },
      evidence: 34.1,
      benign_cap: false,
    });
    const capped = riskScore([list('UPTIME_MONITOR')], [seen('TORRENTING', 0)], 3, NOW, on('DATACENTER'));
    assert.deepEqual([capped.benign_cap, capped.prior], [true, { value: 0, from: null }]);
  });

  it('should let abusive behaviour through the benign cap (a verified crawler address that attacks is not benign)', () => {
    assert.ok(riskScore([list('SEARCH_ENGINE')], [seen('MALICIOUS_TRAFFIC', 0)], 5, NOW).score > 50);
  });

  it('should weigh list membership by its list’s strength (lists aged by their kind)', () => {
    const aged = riskScore([{ value: 'TOR_NODE', last_seen: undefined, strength: 0.5 }], [], 0, NOW);
    assert.deepEqual([aged.score, aged.category.value], [30, 30]);
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
    const mix = (categories: RiskSignal[]) =>
      riskScore(
        categories,
        all.map((b) => seen(b, 0)),
        1e9,
        NOW,
        on('DATACENTER'),
      ).score;
    // evidence = min(100, 85 × 1 × 1.45) = 100; 80 + 0.25 × 100 = 105; 15 + 0.85 × 105 = 104.25 → 100
    assert.equal(mix([list('BOTNET')]), 100);
    // shared (Tor): evidence = 85 × 1.45 × 0.6 = 73.95; 80 + 0.25 × 73.95 = 98.49; 15 + 0.85 × 98.49 = 98.72
    assert.equal(mix([list('BOTNET'), list('TOR_NODE')]), 99);
  });
});

describe(signalFactor.name, () => {
  it("should weigh list membership by its list's strength, and take the larger of it and a feed sighting's recency", () => {
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: undefined }, NOW), 1, 'an overlay alone: current');
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: undefined, strength: 0.25 }, NOW), 0.25);
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: NOW - 30 * DAY, strength: 0.25 }, NOW), 0.5);
    assert.equal(signalFactor({ value: 'TOR_NODE', last_seen: NOW - 90 * DAY, strength: 0.25 }, NOW), 0.25);
    const stale = riskScore([{ value: 'TOR_NODE', last_seen: undefined, strength: 0.5 }], [], 0, NOW);
    assert.deepEqual([stale.score, stale.category], [30, { value: 30, from: 'TOR_NODE' }]);
  });
});
