import protobuf from 'protobufjs';

export type Encode = (value: unknown) => Buffer;

/**
 * A message encoder that writes the very bytes of the type's own encoder (fromObject, then encode:
 * what proto-loader's serializer does), but keeps the encoded field of each frozen value of the
 * message-typed members named in `cached`, and writes it again as is when the same object comes back.
 * An IP lookup's answer is mostly three such members, the network and location records, which are
 * frozen and shared by every address of their range, and for most addresses a shared prior-only
 * intelligence (the HTTP route copies the JSON they carry).
 *
 * protobufjs writes fields in field-number order, so the message is cut at the cached fields: the
 * fields before and between them are encoded by the type itself from a copy holding only them, and
 * the cached fields' bytes (tag, length, message) are placed between; a run of plain string fields
 * (the address) is written as encode writes it, and a run with nothing set is skipped, both without
 * the copy and fromObject a run costs otherwise (docs/grpc.md, "The server"). A member that is not a
 * frozen object is encoded as it always was. Each member's cache holds at most `capacity` entries and is
 * emptied when full; it holds the records strongly until then.
 */
export function frozenPartsEncoder(type: protobuf.Type, cached: string[], capacity = 65_536): Encode {
  const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id);
  type Run = { names: string[]; strings: number[] | undefined };
  const plan: Array<Run | { name: string; sub: protobuf.Type; tag: number; cache: Map<object, Buffer> }> = [];
  let run: protobuf.Field[] = [];
  const endRun = () => {
    if (run.length === 0) return;
    // A run of plain string fields (the address) is written as its tags and strings, as encode writes them.
    const plain = run.every((f) => f.type === 'string' && !f.repeated && !f.map);
    plan.push({ names: run.map((f) => f.name), strings: plain ? run.map((f) => (f.id << 3) | 2) : undefined });
    run = [];
  };
  for (const f of fields) {
    f.resolve();
    if (cached.includes(f.name) && f.resolvedType instanceof protobuf.Type && !f.repeated) {
      endRun();
      plan.push({ name: f.name, sub: f.resolvedType, tag: (f.id << 3) | 2, cache: new Map() });
    } else run.push(f);
  }
  endRun();
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
        let present = 0;
        let strings = step.strings !== undefined;
        for (const n of step.names) {
          const v = record[n];
          // null is as absent to fromObject.
          if (v === undefined || v === null) continue;
          some[n] = v;
          present++;
          if (typeof v !== 'string') strings = false;
        }
        // Nothing of the run is set (the optional members after the kept parts, most of the time).
        if (present === 0) continue;
        if (strings) {
          const w = protobuf.Writer.create();
          for (let i = 0; i < step.names.length; i++) {
            const v = some[step.names[i]!];
            if (v !== undefined) w.uint32(step.strings![i]!).string(v as string);
          }
          bytes = w.finish();
        } else bytes = type.encode(type.fromObject(some)).finish();
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
