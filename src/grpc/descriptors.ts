import type { PackageDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { protoFileOf, protoRoot } from '../proto.ts';

interface FileParts {
  pkg: string;
  messageType: unknown[];
  enumType: unknown[];
  service: unknown[];
  deps: Set<string>;
}

interface DescriptorField {
  name: string;
  typeName?: string;
}

interface DescriptorMessage {
  name: string;
  field: DescriptorField[];
  nestedType: DescriptorMessage[];
  options?: { mapEntry?: boolean };
}

interface DescriptorService {
  method: Array<{ name: string; inputType?: string; outputType?: string }>;
}

/** The fully qualified name protoc writes for a field's type: `.example.v1.Network`, `.google.protobuf.Timestamp`. */
function qualified(field: protobuf.Field): string {
  // fullName carries the leading dot; resolveAll() has run, so a missing type is a bug here.
  if (!field.resolvedType) throw new Error(`the type ${field.type} of ${field.fullName} is not resolved`);
  return field.resolvedType.fullName;
}

/**
 * Rewrites a message's descriptor into protoc's canonical form, which reflection clients are entitled to:
 * - every type a field refers to is fully qualified (`.example.v1.Network`). protobufjs writes the
 *   shortest name that resolves from where the field stands (`Network`, `google.protobuf.Timestamp`),
 *   which only a pool that runs protoc's scope search understands; clients that read the names (or
 *   build pools without that search) cannot resolve them.
 * - a map field's entry type is `<CamelName>Entry` (`FieldsEntry`). protobufjs names it `Fields`, and
 *   descriptor pools that check map entries (Python's, C++'s) refuse the file.
 */
function canonicalMessage(m: DescriptorMessage, type: protobuf.Type): void {
  for (const f of m.field) {
    // Scalars have none (an empty string: the descriptor default).
    if (!f.typeName) continue;
    const field = type.fields[f.name];
    if (!field) throw new Error(`no field ${f.name} in ${type.fullName}`);
    if (!field.map) {
      f.typeName = qualified(field);
      continue;
    }
    const entry = m.nestedType.find((n) => n.options?.mapEntry && n.name === f.typeName);
    if (!entry) throw new Error(`no map entry type for ${field.fullName}`);
    entry.name = `${field.name.replace(/(?:^|_)([a-z0-9])/g, (_s, c: string) => c.toUpperCase())}Entry`;
    f.typeName = `${type.fullName}.${entry.name}`;
    // The entry's value field names the map's value type when it is a message or an enum.
    const value = entry.field.find((v) => v.name === 'value');
    if (value?.typeName) value.typeName = qualified(field);
  }
  for (const nested of m.nestedType) {
    const t = nested.options?.mapEntry ? undefined : type.nested?.[nested.name];
    if (t instanceof protobuf.Type) canonicalMessage(nested, t);
  }
}

/** Methods name their input and output fully qualified too (protobufjs does already; not left to chance). */
function canonicalService(d: DescriptorService, service: protobuf.Service): void {
  for (const m of d.method) {
    const method = service.methods[m.name];
    if (!method?.resolvedRequestType || !method.resolvedResponseType)
      throw new Error(`method ${m.name} of ${service.fullName} is not resolved`);
    m.inputType = method.resolvedRequestType.fullName;
    m.outputType = method.resolvedResponseType.fullName;
  }
}

/** Files a message refers to through its fields, nested types included. */
function typeDeps(type: protobuf.Type, out: Set<string>): void {
  for (const f of type.fieldsArray) if (f.resolvedType) out.add(protoFileOf(f.resolvedType));
  for (const n of type.nestedArray) if (n instanceof protobuf.Type) typeDeps(n, out);
}

/**
 * One FileDescriptorProto per .proto file, with its real name, package and imports. proto-loader
 * merges files by package ("example_v1.proto", "google_protobuf.proto") and drops imports, which
 * breaks `file_by_filename google/protobuf/timestamp.proto` and descriptor pools that check imports
 * (Python's). Reflection is given these instead.
 */
export function fileDescriptorProtos(): Uint8Array[] {
  const files = new Map<string, FileParts>();
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const n of ns.nestedArray) {
      if (!(n instanceof protobuf.Type || n instanceof protobuf.Enum || n instanceof protobuf.Service)) {
        if (n instanceof protobuf.Namespace) walk(n);
        continue;
      }
      const name = protoFileOf(n);
      let file = files.get(name);
      if (!file) files.set(name, (file = { pkg: ns.fullName.slice(1), messageType: [], enumType: [], service: [], deps: new Set() }));
      const d = n as unknown as { toDescriptor(edition?: string): unknown };
      if (n instanceof protobuf.Type) {
        const message = d.toDescriptor('proto3') as DescriptorMessage;
        canonicalMessage(message, n);
        file.messageType.push(message);
        typeDeps(n, file.deps);
      } else if (n instanceof protobuf.Enum) file.enumType.push(d.toDescriptor());
      else {
        const service = d.toDescriptor() as DescriptorService;
        canonicalService(service, n);
        file.service.push(service);
        for (const m of n.methodsArray)
          for (const t of [m.resolvedRequestType, m.resolvedResponseType]) if (t) file.deps.add(protoFileOf(t));
      }
    }
  };
  walk(protoRoot());
  const FileDescriptorProto = (descriptor as unknown as { FileDescriptorProto: protobuf.Type }).FileDescriptorProto;
  return [...files].map(([name, f]) => {
    f.deps.delete(name);
    const message = FileDescriptorProto.create({
      name,
      package: f.pkg,
      dependency: [...f.deps].sort(),
      messageType: f.messageType,
      enumType: f.enumType,
      service: f.service,
      syntax: 'proto3',
    });
    return FileDescriptorProto.encode(message).finish();
  });
}

/** The package definition as the reflection service reads it: only `fileDescriptorProtos` matters to it. */
export function reflectionPackage(pkg: PackageDefinition): PackageDefinition {
  const files = fileDescriptorProtos().map((b) => Buffer.from(b));
  return Object.fromEntries(Object.entries(pkg).map(([k, v]) => [k, { ...v, fileDescriptorProtos: files }])) as PackageDefinition;
}
