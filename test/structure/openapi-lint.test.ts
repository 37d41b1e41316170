import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp } from '../helpers/build-test-app.ts';

const ROOT = join(import.meta.dirname, '../..');

interface LintReport {
  totals: { errors: number; warnings: number };
  version: string;
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

describe('The OpenAPI document', () => {
  it('should pass Redocly lint (redocly.yaml: the recommended rules) with no error and no warning', async (t) => {
    const app = await buildTestApp(t);
    const res = await app.http.inject({ url: '/api/v4/openapi.json' });
    assert.equal(res.statusCode, 200);
    const dir = mkdtempSync(join(tmpdir(), 'umbra-openapi-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, res.body);
    // Offline and quiet: no usage report, no update check, no banner read as output.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format=json', file],
      { cwd: dir, encoding: 'utf8', env, timeout: 120_000 },
    );
    assert.ok(r.stdout.trim().startsWith('{'), `redocly printed no report (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
    const report = JSON.parse(r.stdout) as LintReport;
    const found = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    assert.deepEqual(found, [], `redocly ${report.version} found problems in the served document`);
    assert.deepEqual([report.totals.errors, report.totals.warnings], [0, 0]);
    assert.equal(r.status, 0, r.stderr);
  });
});
