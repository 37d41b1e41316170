import type { PackageDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { protoFileOf, protoRoot } from './proto.ts';

interface FileParts {
  pkg: string;
  messageType: unknown[];
  enumType: unknown[];
  service: unknown[];
  deps: Set<string>;
}

interface DescriptorMessage {
  field: Array<{ name: string; typeName?: string }>;
  nestedType: Array<DescriptorMessage & { name: string; options?: { mapEntry?: boolean } }>;
}

/**
 * protoc names a map field's entry type `<CamelName>Entry` (`FieldsEntry`); protobufjs names it
 * `Fields`, and descriptor pools that check map entries (Python's, C++'s) refuse the file. Renamed here.
 */
function canonicalMapEntries(m: DescriptorMessage): void {
  for (const nested of m.nestedType) {
    canonicalMapEntries(nested);
    if (!nested.options?.mapEntry) continue;
    const field = m.field.find((f) => f.typeName === nested.name);
    if (!field) continue;
    nested.name = `${field.name.replace(/(?:^|_)([a-z0-9])/g, (_s, c: string) => c.toUpperCase())}Entry`;
    field.typeName = nested.name;
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
        canonicalMapEntries(message);
        file.messageType.push(message);
        typeDeps(n, file.deps);
      } else if (n instanceof protobuf.Enum) file.enumType.push(d.toDescriptor());
      else {
        file.service.push(d.toDescriptor());
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
