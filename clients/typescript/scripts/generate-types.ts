// Writes src/generated/openapi.ts from the OpenAPI document umbra serves (run from the repo root's tree).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED_FILE, typesOf } from './openapi-types.ts';
import { servedDocument } from './served-document.ts';

const file = join(import.meta.dirname, '..', GENERATED_FILE);
writeFileSync(file, await typesOf(await servedDocument()));
console.log(`wrote ${file}`);
