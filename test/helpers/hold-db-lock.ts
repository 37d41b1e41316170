// A second process holding the embedded database's write lock, as another tool or a stuck admin
// command would (readers still read, in WAL mode). argv: database file, mode ('write'), seconds to
// hold. Prints "locked" once it holds the lock and "released" after.
import Database from 'better-sqlite3';

const [file, , seconds] = process.argv.slice(2);
const db = new Database(file!, { timeout: 5000 });
db.exec('BEGIN IMMEDIATE');
// A write inside the transaction, as a real writer would have.
db.prepare('UPDATE orgs SET created_at = created_at WHERE rowid = (SELECT min(rowid) FROM orgs)').run();
process.stdout.write('locked\n');
setTimeout(() => {
  db.exec('COMMIT');
  db.close();
  process.stdout.write('released\n');
}, Number(seconds) * 1000);
