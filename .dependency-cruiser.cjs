/**
 * The module structure umbra keeps (docs/architecture.md): no cycles, the domain free of transports,
 * storage and the demo, gRPC beside HTTP rather than on it, lib at the bottom, and production code
 * that never reaches into test/. Checked by test/structure/dependencies.test.ts on every `npm test`.
 */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'Modules that import each other cannot be read, tested or replaced one at a time.', from: {}, to: { circular: true } },
    {
      name: 'domain-stays-free',
      severity: 'error',
      comment: 'modules/ is the domain: transports, storage backends, the CLI and the demo depend on it, never the reverse.',
      from: { path: '^src/modules/' },
      to: { path: ['^src/(http|grpc|cli|storage|demo)/', '^src/(app|services|metrics)\\.ts$'] },
    },
    { name: 'grpc-beside-http', severity: 'error', comment: 'The gRPC mirror shares modules with HTTP, not HTTP code.', from: { path: '^src/grpc/' }, to: { path: '^src/http/' } },
    { name: 'http-beside-grpc', severity: 'error', from: { path: '^src/http/' }, to: { path: '^src/grpc/' } },
    {
      name: 'lib-at-the-bottom',
      severity: 'error',
      comment: 'src/lib holds small primitives that everything may use; it uses nothing of umbra but itself.',
      from: { path: '^src/lib/' },
      to: { path: '^src/(?!lib/)' },
    },
    {
      name: 'storage-below-transports',
      severity: 'error',
      from: { path: '^src/storage/' },
      to: { path: ['^src/(http|grpc|cli|demo)/', '^src/app\\.ts$'] },
    },
    { name: 'production-without-tests', severity: 'error', comment: 'Test helpers and fixtures live in test/; production code never needs them.', from: { path: '^src/', pathNot: '\\.test\\.ts$' }, to: { path: ['^test/', '\\.test\\.ts$'] } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js'] },
  },
};
