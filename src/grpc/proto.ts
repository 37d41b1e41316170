import { fileURLToPath } from 'node:url';
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';

/** The .proto source of truth, relative to the proto/ include root. */
export const PROTO_FILE = 'example/v1/example_service.proto';
export const PROTO_ROOT = fileURLToPath(new URL('../../proto', import.meta.url));
export const SERVICE_NAME = 'example.v1.ExampleService';

/**
 * keepCase: messages are plain objects with the proto's snake_case names, the same member names as
 * the HTTP JSON, so handlers hand module results over nearly as they are. The well-known types
 * (Timestamp, Struct) come from protobufjs's bundled copies, so no include path is needed for them.
 */
export const LOADER_OPTIONS: Options = { keepCase: true, longs: Number, enums: String, defaults: false, oneofs: true, includeDirs: [PROTO_ROOT] };

let cached: PackageDefinition | undefined;

/** Loads the service definition once per process (a pure function of the .proto file). */
export function packageDefinition(): PackageDefinition {
  cached ??= loadSync(PROTO_FILE, LOADER_OPTIONS);
  return cached;
}
