-- Up Migration

-- Idempotency keys of ingestion (the Idempotency-Key header, `umbra ingest --idempotency-key`): how far
-- an ingest under a key stored its input, its answer, and, once it read its whole input, the digest of
-- its records. `owner` holds a running ingest's claim until lease_until; a dead node's claim lapses.
CREATE TABLE ingest_keys (
  key text COLLATE "C" PRIMARY KEY,
  feed text NOT NULL,
  owner text,
  lease_until bigint NOT NULL,
  stored_through bigint NOT NULL DEFAULT 0,
  summary jsonb,
  records_sha256 text,
  updated_ms bigint NOT NULL
);
CREATE INDEX ingest_keys_updated ON ingest_keys (updated_ms);

-- Down Migration

DROP TABLE ingest_keys;
