// Preloaded into every test file's own process (scripts/run-tests.mjs): its stdout, the pipe that carries
// the file's test reports to the runner, is written synchronously. With --test-force-exit the process
// exits as soon as its tests are done, and writes still queued for a busy pipe were lost with it: on
// Node 24 a file's last suites then went missing from the run without any failure (43 to 48 of a file's
// 50 tests reported, 4 runs in 5, two files at a time on two cores).
const handle = process.stdout._handle;
if (handle && typeof handle.setBlocking === 'function') handle.setBlocking(true);
