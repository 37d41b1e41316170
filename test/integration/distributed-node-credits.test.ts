import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, timed, until } from '../helpers/distributed-cluster.ts';

/**
 * The credits of a distributed node killed with kill -9 (modules/credits/block-credit-ledger.ts): the
 * block it reserved stays out of the team's balance until its lease (30 s after its last report) ends,
 * then its unspent part returns. The team is charged exactly what the node reported; what it served
 * after its last report (one flush interval, 20 ms) is the most a crash loses, an under-charge.
 */

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Distributed mode: the credits of a node killed with kill -9', { timeout: 180_000 }, () => {
  it('come back when its lease ends: the team pays what the node reported, and only its last flush interval of charges is lost', async (t) => {
    const c = await startCluster(t);
    const START = 600;
    const team = await c.team('delta', START, 'BASIC', { lookup: 10_000, account: 1_000 });
    // Node A reserves 500 credits at a time, node B 200: B can spend only what A left in the balance.
    const [a, b] = await Promise.all([
      c.startNode(t, 'node-a', { UMBRA_CREDIT_BLOCK: '500' }),
      c.startNode(t, 'node-b', { UMBRA_CREDIT_BLOCK: '200' }),
    ]);
    const lookup = (node: typeof a) => timed(() => node.api('/lookup/ip/8.8.8.8', team.key));

    // Two clients keep node A busy; it is killed with lookups in flight, before it spent half its block
    // (so it never reserved a second one).
    const answeredAt: number[] = [];
    let killed = false;
    const client = async () => {
      while (!killed) {
        const r = await lookup(a);
        if (r.status === 200) answeredAt.push(performance.now());
        else assert.equal(r.status, 0, `node A answered ${r.status}: ${JSON.stringify(r.body)}`);
        await sleep(5);
      }
    };
    const clients = [client(), client()];
    await until(
      'node A serves',
      async () => answeredAt.length,
      (n) => n >= 120,
      { everyMs: 5 },
    );
    const killedAt = performance.now();
    await a.kill9();
    killed = true;
    await Promise.all(clients);
    const served = answeredAt.length;
    const [block] = await c.sql<{ reserved: number; used: number; lease_until: number }>(
      'SELECT reserved::int, used::int, lease_until::int FROM credit_blocks WHERE node_id = $1',
      ['node-a'],
    );
    assert.ok(block, "node A's block is still reserved");
    assert.equal(block.reserved, 500);
    const reported = block.used;
    const lost = served - reported;
    // Answers of the node's last 100 ms (five flush intervals), those that came while it was dying included.
    const lastInterval = answeredAt.filter((at) => at > killedAt - 100).length;
    // Charged before answering: a lookup whose answer the kill cut off may be charged (at most the two in flight).
    assert.ok(lost >= -2, `node A reported ${reported} charges for ${served} answered lookups`);
    assert.ok(lost <= lastInterval, `${lost} charges lost, more than node A answered in its last 100 ms (${lastInterval})`);

    // Until the lease ends the block's unspent part is not the team's to spend: node B gets what is left
    // in the balance, then 402.
    const view = await timed(() => b.api('/account/me', team.key));
    assert.equal(view.body.lookup_quota.credits, START - reported, "/account/me counts the live block as the team's");
    let before = 0;
    for (;;) {
      const r = await lookup(b);
      if (r.status === 402) break;
      assert.equal(r.status, 200, JSON.stringify(r.body));
      before++;
    }
    assert.equal(before, START - block.reserved, 'node B spends exactly the balance A did not reserve');

    // The lease ends 30 s after node A's last report; then the unspent part returns.
    const back = await until(
      'a lookup on node B after the lease',
      () => lookup(b),
      (r) => r.status === 200,
      { everyMs: 250, timeoutMs: 60_000 },
    );
    const backAt = Date.now();
    assert.ok(backAt >= block.lease_until * 1000, 'not before the lease ended');
    assert.ok(backAt < block.lease_until * 1000 + 5_000, `returned ${secs(backAt - block.lease_until * 1000)} after the lease ended`);
    let after = 1;
    for (;;) {
      const r = await lookup(b);
      if (r.status === 402) break;
      assert.equal(r.status, 200, JSON.stringify(r.body));
      after++;
    }
    assert.equal(before + after, START - reported, 'every credit node A did not report came back, and nothing more');
    assert.deepEqual(await c.sql('SELECT node_id FROM credit_blocks WHERE node_id = $1', ['node-a']), [], "node A's block is gone");
    // B gives its own block back once idle (2 s): the balance of record is then 0.
    await until(
      'the balance of record',
      async () =>
        Number((await c.sql<{ balance: string }>('SELECT balance FROM credit_accounts WHERE org_id = $1', [team.orgId]))[0]!.balance),
      (n) => n === 0,
      { timeoutMs: 10_000 },
    );
    t.diagnostic(
      `node A served ${served}, reported ${reported} (lost ${lost}, ${lastInterval} answered in its last 100 ms); ` +
        `node B spent ${before} before the lease ended and ${after} after; A's credits returned ${secs(back.ms)} into the wait, ` +
        `${secs(performance.now() - killedAt)} after the kill`,
    );
  });
});
