import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED_FILE, typesOf } from '../scripts/openapi-types.ts';
import { servedDocument } from '../scripts/served-document.ts';

describe('The client types generated from the OpenAPI document', () => {
  it('should be exactly what openapi-typescript makes of the document umbra serves now (else: npm run generate -w @umbra/client)', async () => {
    const checkedIn = readFileSync(join(import.meta.dirname, '..', GENERATED_FILE), 'utf8');
    const fresh = await typesOf(await servedDocument());
    assert.ok(fresh.includes('"/api/v4/lookup/ips"'), 'the document was read');
    assert.equal(checkedIn, fresh, `${GENERATED_FILE} is stale: run npm run generate -w @umbra/client and commit it`);
  });
});
