import protobuf from 'protobufjs';

export type Encode = (value: unknown) => Buffer;

/**
 * A message encoder that writes the very bytes of the type's own encoder (fromObject, then encode:
 * what proto-loader's serializer does), but keeps the encoded field of each frozen value of the
 * message-typed members named in `cached`, and writes it again as is when the same object comes back.
 * An IP lookup's answer is mostly two such members, the network and location records, which are
 * frozen and shared by every address of their range (the HTTP route keeps their JSON the same way).
 *
 * protobufjs writes fields in field-number order, so the message is cut at the cached fields: the
 * fields before and between them are encoded by the type itself from a copy holding only them, and
 * the cached fields' bytes (tag, length, message) are placed between. A member that is not a frozen
 * object is encoded as it always was. Each member's cache holds at most `capacity` entries and is
 * emptied when full; it holds the records strongly until then.
 */
export function frozenPartsEncoder(type: protobuf.Type, cached: string[], capacity = 65_536): Encode {
  const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id);
  const plan: Array<{ names: string[] } | { name: string; sub: protobuf.Type; tag: number; cache: Map<object, Buffer> }> = [];
  let run: string[] = [];
  for (const f of fields) {
    f.resolve();
    if (cached.includes(f.name) && f.resolvedType instanceof protobuf.Type && !f.repeated) {
      if (run.length > 0) plan.push({ names: run });
      run = [];
      plan.push({ name: f.name, sub: f.resolvedType, tag: (f.id << 3) | 2, cache: new Map() });
    } else run.push(f.name);
  }
  if (run.length > 0) plan.push({ names: run });
  const whole = (v: unknown) => Buffer.from(type.encode(type.fromObject(v as Record<string, unknown>)).finish());

  return (value) => {
    if (typeof value !== 'object' || value === null) return whole(value);
    const record = value as Record<string, unknown>;
    const parts: Uint8Array[] = [];
    let length = 0;
    for (const step of plan) {
      let bytes: Uint8Array;
      if ('names' in step) {
        const some: Record<string, unknown> = {};
        for (const n of step.names) if (record[n] !== undefined) some[n] = record[n];
        bytes = type.encode(type.fromObject(some)).finish();
      } else {
        const member = record[step.name];
        if (member === undefined || member === null) continue;
        if (typeof member !== 'object') return whole(value);
        const hit = Object.isFrozen(member) ? step.cache.get(member) : undefined;
        if (hit !== undefined) bytes = hit;
        else {
          const w = protobuf.Writer.create();
          w.uint32(step.tag).fork();
          step.sub.encode(step.sub.fromObject(member as Record<string, unknown>), w).ldelim();
          const made = Buffer.from(w.finish());
          if (Object.isFrozen(member)) {
            if (step.cache.size >= capacity) step.cache.clear();
            step.cache.set(member, made);
          }
          bytes = made;
        }
      }
      parts.push(bytes);
      length += bytes.length;
    }
    return Buffer.concat(parts, length);
  };
}
