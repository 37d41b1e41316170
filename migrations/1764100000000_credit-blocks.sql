-- Up Migration

-- Block reservations of credits (distributed mode): each node moves credits from a team's balance into
-- a block of its own, spends them in memory and reports what it spent. A block belongs to one period
-- and one lease: blocks of an ended period no longer count, and a block whose lease ended (its node
-- died) gives its unspent part back.
CREATE TABLE credit_blocks (
  node_id text NOT NULL,
  org_id text NOT NULL REFERENCES credit_accounts (org_id) ON DELETE CASCADE,
  period_end bigint NOT NULL,
  reserved bigint NOT NULL CHECK (reserved >= 0),
  used bigint NOT NULL CHECK (used >= 0 AND used <= reserved),
  lease_until bigint NOT NULL,
  PRIMARY KEY (org_id, node_id)
);
CREATE INDEX credit_blocks_lease ON credit_blocks (lease_until);

-- One round trip, one transaction: refill, report, grant (or release). The team's account row is locked
-- first, always, so concurrent reservations of a team run one after the other and never deadlock.
CREATE FUNCTION umbra_credit_reserve(
  p_node text, p_org text, p_spent bigint, p_spent_period bigint, p_want bigint, p_now bigint, p_lease_until bigint, p_release boolean
) RETURNS TABLE (block_left bigint, team_credits bigint, period_end bigint)
LANGUAGE plpgsql AS $$
DECLARE
  a credit_accounts%ROWTYPE;
  v_reserved bigint := 0;
  v_used bigint := 0;
  v_excess bigint;
  v_grant bigint;
BEGIN
  SELECT * INTO a FROM credit_accounts WHERE org_id = p_org FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF p_now >= a.period_end THEN
    a.balance := a.allotment;
    a.period_end := a.period_end + ((p_now - a.period_end) / a.period_seconds + 1) * a.period_seconds;
  END IF;
  -- Blocks of an ended period hold nothing any more: the refill replaced the balance they came from.
  DELETE FROM credit_blocks b WHERE b.org_id = p_org AND b.period_end <> a.period_end;
  SELECT b.reserved, b.used INTO v_reserved, v_used FROM credit_blocks b WHERE b.org_id = p_org AND b.node_id = p_node;
  IF NOT FOUND THEN
    v_reserved := 0;
    v_used := 0;
  END IF;
  -- Spending reported for an ended period is dropped with that period.
  IF p_spent > 0 AND p_spent_period = a.period_end THEN
    v_used := v_used + p_spent;
    -- What the block no longer covers (an operator set the credits, or the lease had ended) comes from the balance.
    v_excess := GREATEST(0, v_used - v_reserved);
    v_used := v_used - v_excess;
    a.balance := GREATEST(0, a.balance - v_excess);
  END IF;
  IF p_release THEN
    a.balance := a.balance + (v_reserved - v_used);
    DELETE FROM credit_blocks b WHERE b.org_id = p_org AND b.node_id = p_node;
    v_reserved := 0;
    v_used := 0;
  ELSE
    v_grant := LEAST(GREATEST(p_want, 0), a.balance);
    a.balance := a.balance - v_grant;
    v_reserved := v_reserved + v_grant;
    INSERT INTO credit_blocks AS b (node_id, org_id, period_end, reserved, used, lease_until)
    VALUES (p_node, p_org, a.period_end, v_reserved, v_used, p_lease_until)
    ON CONFLICT (org_id, node_id) DO UPDATE
      SET period_end = EXCLUDED.period_end, reserved = EXCLUDED.reserved, used = EXCLUDED.used, lease_until = EXCLUDED.lease_until;
  END IF;
  UPDATE credit_accounts c SET balance = a.balance, period_end = a.period_end WHERE c.org_id = p_org;
  RETURN QUERY SELECT
    v_reserved - v_used,
    a.balance + COALESCE((SELECT sum(b.reserved - b.used) FROM credit_blocks b
                          WHERE b.org_id = p_org AND b.period_end = a.period_end AND b.lease_until > p_now), 0)::bigint,
    a.period_end;
END;
$$;

-- Blocks whose lease ended give their unspent part back to their team (in the block's period only).
CREATE FUNCTION umbra_credit_reclaim(p_now bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_org text;
  v_total bigint := 0;
  v_back bigint;
BEGIN
  FOR v_org IN SELECT DISTINCT b.org_id FROM credit_blocks b WHERE b.lease_until <= p_now ORDER BY 1 LOOP
    -- The account row first, as in umbra_credit_reserve.
    PERFORM 1 FROM credit_accounts c WHERE c.org_id = v_org FOR UPDATE;
    WITH gone AS (
      DELETE FROM credit_blocks b WHERE b.org_id = v_org AND b.lease_until <= p_now RETURNING b.period_end, b.reserved - b.used AS unspent
    )
    SELECT COALESCE(sum(g.unspent), 0) INTO v_back FROM gone g JOIN credit_accounts c ON c.org_id = v_org AND c.period_end = g.period_end;
    IF v_back > 0 THEN
      UPDATE credit_accounts c SET balance = c.balance + v_back WHERE c.org_id = v_org;
      v_total := v_total + v_back;
    END IF;
  END LOOP;
  RETURN v_total;
END;
$$;

-- The team's credits become p_total: the balance takes it and every block's unspent part is voided
-- (nodes learn it at their next report; what they spend meanwhile is taken from the new balance).
CREATE FUNCTION umbra_credit_set(p_org text, p_total bigint, p_now bigint) RETURNS TABLE (balance bigint, period_end bigint)
LANGUAGE plpgsql AS $$
DECLARE
  a credit_accounts%ROWTYPE;
BEGIN
  SELECT * INTO a FROM credit_accounts c WHERE c.org_id = p_org FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF p_now >= a.period_end THEN
    a.period_end := a.period_end + ((p_now - a.period_end) / a.period_seconds + 1) * a.period_seconds;
  END IF;
  UPDATE credit_blocks b SET reserved = b.used WHERE b.org_id = p_org;
  UPDATE credit_accounts c SET balance = GREATEST(0, p_total), period_end = a.period_end WHERE c.org_id = p_org;
  RETURN QUERY SELECT GREATEST(0, p_total), a.period_end;
END;
$$;

-- Down Migration
DROP FUNCTION umbra_credit_set(text, bigint, bigint);
DROP FUNCTION umbra_credit_reclaim(bigint);
DROP FUNCTION umbra_credit_reserve(text, text, bigint, bigint, bigint, bigint, bigint, boolean);
DROP TABLE credit_blocks;
