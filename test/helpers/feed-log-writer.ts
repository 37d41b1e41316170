// Child process for the crash test: appends numbered records forever, printing each acknowledged count.
import { FileFeedLog } from '../../src/storage/embedded/file-feed-log.ts';

const dir = process.argv[2]!;
const hour = Number(process.argv[3]);
const log = new FileFeedLog(dir);
let n = 0;
const pad = 'p'.repeat(200);
for (;;) {
  const batch = Array.from({ length: 50 }, () => ({ timeMs: hour, line: JSON.stringify({ n: n++, pad }) }));
  await log.append('proxies', batch);
  process.stdout.write(`${n}\n`);
}
