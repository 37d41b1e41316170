// Baselines: bare node:http answering a fixed JSON body of the same size as a real lookup response.
// `node bare-server.ts BODY [HEADERS_JSON]`: with HEADERS_JSON (name → value), those headers are sent
// as well, with the same fixed values on every answer: what node:http itself costs to send umbra's
// header set, with none of umbra's work behind it.
import { createServer } from 'node:http';

const body = process.argv[2] ?? '{"ok":true}';
const extra = process.argv[3] === undefined ? {} : (JSON.parse(process.argv[3]) as Record<string, string>);
// One headers object for every answer (node only reads it).
const headers = { ...extra, 'content-type': 'application/json; charset=utf-8', 'content-length': `${Buffer.byteLength(body)}` };
const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
