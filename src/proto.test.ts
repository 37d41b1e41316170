import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { IpResult } from './http/schemas.ts';
import { protoRoot } from './proto.ts';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
}

/**
 * Differences between an HTTP JSON schema and a proto message, member by member and nested: a member
 * with no field or a field with no member, an array that is not repeated (or the reverse), an object
 * that is not a message. Instants are integers over HTTP and Timestamps here, so a Timestamp is a leaf.
 */
function differences(schema: JsonSchema, type: protobuf.Type, path: string): string[] {
  const out: string[] = [];
  const props = schema.properties ?? {};
  for (const [name, member] of Object.entries(props)) {
    const field = type.fields[name];
    if (!field) {
      out.push(`${path}.${name}: no field in ${type.name}`);
      continue;
    }
    const isArray = member.type === 'array';
    if (isArray !== field.repeated)
      out.push(`${path}.${name}: ${isArray ? 'array' : 'single'} over HTTP, ${field.repeated ? 'repeated' : 'single'} in ${type.name}`);
    const inner = isArray ? member.items! : member;
    if (inner.properties) {
      if (field.resolvedType instanceof protobuf.Type) out.push(...differences(inner, field.resolvedType, `${path}.${name}`));
      else out.push(`${path}.${name}: an object over HTTP, ${field.type} in ${type.name}`);
    }
  }
  for (const field of type.fieldsArray)
    if (!(field.name in props)) out.push(`${path}.${field.name}: ${type.name} field not in the HTTP schema`);
  return out;
}

describe('example.v1 IPLookupResult', () => {
  it('should have a field for every member of the HTTP IP result, intelligence and evidence included, and nothing else', () => {
    const type = protoRoot().lookupType('example.v1.IPLookupResult');
    assert.deepEqual(differences(IpResult as JsonSchema, type, 'IpResult'), []);
  });

  it('should notice a member the proto lacks', () => {
    const schema = structuredClone(IpResult) as JsonSchema;
    schema.properties!.intelligence!.properties!.last_seen = { type: 'integer' };
    assert.deepEqual(differences(schema, protoRoot().lookupType('example.v1.IPLookupResult'), 'IpResult'), [
      'IpResult.intelligence.last_seen: no field in Intelligence',
    ]);
  });
});
