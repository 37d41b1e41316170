-- Up Migration

-- The distributed mode's state: what the embedded database keeps (src/storage/embedded/sqlite-db.ts),
-- in PostgreSQL. Runs with search_path set to umbra's schema, so no name here is schema-qualified.
-- Identifiers compare byte by byte (COLLATE "C"), as they do in SQLite, whatever the database's
-- default collation; names and e-mail addresses are unique regardless of case, as SQLite's NOCASE
-- makes them. bigint for every count, size, amount and time that may pass 2^31.

CREATE TABLE orgs (
  id text COLLATE "C" PRIMARY KEY,
  name text NOT NULL,
  credit_allotment bigint NOT NULL,
  reset_period_s bigint NOT NULL,
  max_streams integer NOT NULL,
  created_at bigint NOT NULL
);
CREATE UNIQUE INDEX orgs_name ON orgs (lower(name));

CREATE TABLE members (
  id text COLLATE "C" PRIMARY KEY,
  org_id text COLLATE "C" NOT NULL REFERENCES orgs (id),
  email text NOT NULL,
  first_name text NOT NULL,
  last_name text NOT NULL,
  relation text NOT NULL
);
CREATE UNIQUE INDEX members_email ON members (org_id, lower(email));

-- Keys are stored only as the SHA-256 of the secret.
CREATE TABLE api_keys (
  id text COLLATE "C" PRIMARY KEY,
  org_id text COLLATE "C" NOT NULL REFERENCES orgs (id),
  member_id text COLLATE "C" NOT NULL REFERENCES members (id),
  name text,
  hash text COLLATE "C" NOT NULL UNIQUE,
  scopes jsonb NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE INDEX api_keys_org ON api_keys (org_id);

-- One row per team; every change is one conditional UPDATE (see PgCreditLedger).
CREATE TABLE credit_accounts (
  org_id text COLLATE "C" PRIMARY KEY REFERENCES orgs (id),
  balance bigint NOT NULL,
  allotment bigint NOT NULL,
  period_seconds bigint NOT NULL CHECK (period_seconds > 0),
  period_end bigint NOT NULL
);

-- Per-team overrides of the rate buckets.
CREATE TABLE rate_limits (
  org_id text COLLATE "C" NOT NULL REFERENCES orgs (id),
  bucket text COLLATE "C" NOT NULL,
  rate double precision NOT NULL,
  burst bigint NOT NULL,
  PRIMARY KEY (org_id, bucket)
);

-- Exports: hour is -1 for daily rows so (feed, kind, date, hour) can be the primary key. A key belongs
-- to at most one row. schema is json (not jsonb) so it reads back exactly as written.
CREATE TABLE export_snapshots (
  feed text COLLATE "C" NOT NULL,
  kind text COLLATE "C" NOT NULL CHECK (kind IN ('hourly', 'daily')),
  date text COLLATE "C" NOT NULL,
  hour integer NOT NULL,
  period_start_ms bigint NOT NULL,
  key text COLLATE "C" NOT NULL UNIQUE,
  size bigint NOT NULL,
  rows bigint NOT NULL,
  checksum text COLLATE "C" NOT NULL,
  schema json NOT NULL,
  created_at bigint NOT NULL,
  source_version text,
  PRIMARY KEY (feed, kind, date, hour)
);
CREATE INDEX export_snapshots_order ON export_snapshots (feed, period_start_ms DESC, kind DESC);

CREATE TABLE export_rollups (
  feed text COLLATE "C" NOT NULL,
  date text COLLATE "C" NOT NULL,
  state text NOT NULL CHECK (state IN ('assembling', 'done')),
  updated_at bigint NOT NULL,
  PRIMARY KEY (feed, date)
);

-- Export publishes under way: the row to record once the key holds these bytes (at most one per key).
-- Left by a crash, recovery completes it if the upload finished, else drops it.
CREATE TABLE export_publish_intents (
  key text COLLATE "C" PRIMARY KEY,
  feed text COLLATE "C" NOT NULL,
  kind text COLLATE "C" NOT NULL CHECK (kind IN ('hourly', 'daily')),
  date text COLLATE "C" NOT NULL,
  hour integer NOT NULL,
  size bigint NOT NULL,
  rows bigint NOT NULL,
  checksum text COLLATE "C" NOT NULL,
  schema json NOT NULL,
  created_at bigint NOT NULL,
  source_version text,
  started_at_ms bigint NOT NULL
);

-- Per-team intelligence overlays. No reference to orgs: an overlay may name a team another node
-- creates later, as the embedded store allows.
CREATE TABLE intel_overlays (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id text COLLATE "C" NOT NULL,
  cidr text COLLATE "C" NOT NULL,
  category text NOT NULL,
  provider text,
  action text NOT NULL CHECK (action IN ('allow', 'deny')),
  created_at bigint NOT NULL
);
CREATE INDEX intel_overlays_org ON intel_overlays (org_id, cidr);

-- Imported range lists, one per kind and provider. Kind and provider are upper-case tags.
CREATE TABLE intel_lists (
  kind text COLLATE "C" NOT NULL CHECK (kind ~ '^[A-Z0-9_]{1,64}$'),
  provider text COLLATE "C" NOT NULL CHECK (provider ~ '^[A-Z0-9_]{1,64}$'),
  version text NOT NULL,
  imported_at bigint NOT NULL,
  format text NOT NULL,
  cidrs text[] NOT NULL,
  PRIMARY KEY (kind, provider)
);

-- Change counters the nodes poll to notice lists and overlays changed anywhere: every write that
-- changes a table bumps its row in the same statement or transaction.
CREATE TABLE revisions (
  name text COLLATE "C" PRIMARY KEY,
  value bigint NOT NULL
);
INSERT INTO revisions (name, value) VALUES ('intel_overlays', 0), ('intel_lists', 0);

-- Down Migration

DROP TABLE revisions;
DROP TABLE intel_lists;
DROP TABLE intel_overlays;
DROP TABLE export_publish_intents;
DROP TABLE export_rollups;
DROP TABLE export_snapshots;
DROP TABLE rate_limits;
DROP TABLE credit_accounts;
DROP TABLE api_keys;
DROP TABLE members;
DROP TABLE orgs;
