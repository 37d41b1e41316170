// Baselines: bare node:http answering a fixed JSON body of the same size as a real lookup response.
// `node bare-server.ts BODY [HEADERS_JSON]`: with HEADERS_JSON (name → value), those headers are sent
// as well, with the same fixed values on every answer: what node:http itself costs to send umbra's
// header set, with none of umbra's work behind it.
// `node bare-server.ts --body-file FILE [HEADERS_JSON]`: the body is the bytes of FILE, for bodies
// larger than a command-line argument may be (a batch answer, about half a megabyte). A request body
// is read to its end and dropped, as node does with any body a handler leaves unread.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const fromFile = process.argv[2] === '--body-file';
const args = fromFile ? process.argv.slice(4) : process.argv.slice(3);
const body: string | Buffer = fromFile ? readFileSync(process.argv[3]!) : (process.argv[2] ?? '{"ok":true}');
const extra = args[0] === undefined ? {} : (JSON.parse(args[0]) as Record<string, string>);
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
