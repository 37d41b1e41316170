import { readFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/** The .proto source of truth, relative to the proto/ include root. */
export const PROTO_FILE = 'example/v1/example_service.proto';
export const PROTO_ROOT = fileURLToPath(new URL('../proto', import.meta.url));
export const SERVICE_NAME = 'example.v1.ExampleService';
/** The well-known types the service imports; canonical copies live under proto/google/protobuf/. */
const WELL_KNOWN = ['google/protobuf/timestamp.proto', 'google/protobuf/struct.proto'];

/**
 * keepCase: messages are plain objects with the proto's snake_case names, the same member names as
 * the HTTP JSON, so handlers hand module results over nearly as they are.
 */
export const LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

let registered = false;
/** Fully qualified name (`.google.protobuf.Timestamp`) → its well-known file; bundled types carry no file name. */
const wellKnownFiles = new Map<string, string>();

/**
 * protobufjs always answers `google/protobuf/*.proto` imports from its bundled copies, whose field
 * names are camelCase (Value.numberValue). It would then serve those names through reflection, and
 * clients that special-case the well-known types by their canonical names (protojson in Python, Go)
 * would misread them. So the canonical files are registered in their place, once per process.
 */
function registerWellKnownTypes(): void {
  if (registered) return;
  for (const name of WELL_KNOWN) {
    const parsed = protobuf.parse(readFileSync(join(PROTO_ROOT, name), 'utf8'), { keepCase: true });
    protobuf.common(name, parsed.root.toJSON() as protobuf.INamespace);
    const ns = parsed.root.lookup('google.protobuf') as protobuf.Namespace;
    for (const n of ns.nestedArray) wellKnownFiles.set(n.fullName, name);
  }
  registered = true;
}

let cached: PackageDefinition | undefined;

/** Loads the .proto source of truth with the canonical well-known types (clients in tests use it too). */
export function loadProto(options: Options): PackageDefinition {
  registerWellKnownTypes();
  return loadSync(PROTO_FILE, { ...options, includeDirs: [PROTO_ROOT] });
}

/** The server's service definition, loaded once per process (a pure function of the .proto files). */
export function packageDefinition(): PackageDefinition {
  cached ??= loadProto(LOADER_OPTIONS);
  return cached;
}

/** The parsed .proto files as a protobufjs Root, each type knowing its file (for reflection's descriptors). */
export function protoRoot(): protobuf.Root {
  registerWellKnownTypes();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) || WELL_KNOWN.includes(target) ? target : join(PROTO_ROOT, target));
  root.loadSync(PROTO_FILE, { keepCase: true });
  root.resolveAll();
  return root;
}

/** The file that declares a type, as imports spell it (`example/v1/example_service.proto`). */
export function protoFileOf(obj: protobuf.ReflectionObject): string {
  if (obj.filename && isAbsolute(obj.filename)) return relative(PROTO_ROOT, obj.filename);
  const name = obj.filename ?? wellKnownFiles.get(obj.fullName);
  if (!name) throw new Error(`no .proto file known for ${obj.fullName}`);
  return name;
}
