-- API keys and rate limit buckets (spec 2.9, 3, 5), shared by every gateway process.

-- Only the hash of each key's secret is kept. A key is disabled from `disabled_at` on and
-- expired from `expires_at` on.
CREATE TABLE api_keys (
  public_id text PRIMARY KEY,
  secret_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  disabled_at timestamptz
);

-- Token buckets: `tokens` as of `updated_at` (on the database's clock, which every gateway
-- process shares). A missing bucket is a full one. Capacity and refill rate come with each call
-- (they are configuration). The level may be below zero: a debt from settling more than was
-- borrowed, refilled before anything more is taken. Rows are rewritten on every request: the
-- free space per page keeps those updates in place (HOT).
CREATE TABLE rate_limit_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  updated_at timestamptz NOT NULL
) WITH (fillfactor = 50);

-- Creates the missing buckets of `bucket_keys` (full), then locks all of them, both in key
-- order, so that calls on overlapping sets of buckets wait for each other and never deadlock.
-- The locked buckets come back in key order, once each.
CREATE FUNCTION gateway_lock_buckets(bucket_keys text[], capacities double precision[])
RETURNS TABLE (bucket_key text, bucket_tokens double precision, bucket_updated_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rate_limit_buckets AS bucket (key, tokens, updated_at)
    SELECT given.key, given.capacity, clock_timestamp()
    FROM unnest(bucket_keys, capacities) AS given(key, capacity)
    ORDER BY given.key
    ON CONFLICT (key) DO NOTHING;
  RETURN QUERY
    SELECT bucket.key, bucket.tokens, bucket.updated_at
    FROM rate_limit_buckets AS bucket
    WHERE bucket.key = ANY (bucket_keys)
    ORDER BY bucket.key
    FOR UPDATE;
END
$$;

-- Takes amounts[i] from bucket bucket_keys[i] for every i. Each bucket is first refilled for the
-- time since it was last written: min(capacity, tokens + elapsed seconds * refill rate). A key
-- named twice is one bucket (refilled with its first capacity and rate) that both amounts are
-- taken from. One call is one round trip and one transaction; both uses of buckets go through it:
-- * all_or_nothing (consuming): when a bucket has less than its amount, nothing changes and the
--   answer names the first such bucket (0-based, in the order given), what it holds, and the
--   seconds until it would hold enough at its refill rate (even when its amount exceeds its
--   capacity; infinity when it does not refill);
-- * otherwise (settling): a negative amount gives back, never leaving a bucket above its
--   capacity; a bucket may go below zero.
CREATE FUNCTION gateway_take_from_buckets(
  bucket_keys text[],
  capacities double precision[],
  refill_rates double precision[],
  amounts double precision[],
  all_or_nothing boolean,
  OUT short_index integer,
  OUT available double precision,
  OUT retry_after_s double precision
)
LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(cardinality(bucket_keys), 0);
  locked_keys text[];
  levels double precision[];
  stamps timestamptz[];
  refilled boolean[] := '{}';
  now_ timestamptz;
  i integer;
  j integer;
BEGIN
  IF coalesce(cardinality(capacities), 0) <> n OR coalesce(cardinality(refill_rates), 0) <> n
    OR coalesce(cardinality(amounts), 0) <> n THEN
    RAISE EXCEPTION 'gateway_take_from_buckets: the arrays differ in length';
  END IF;
  IF n = 0 THEN
    RETURN;
  END IF;
  SELECT array_agg(locked.bucket_key ORDER BY locked.bucket_key),
    array_agg(locked.bucket_tokens ORDER BY locked.bucket_key),
    array_agg(locked.bucket_updated_at ORDER BY locked.bucket_key)
  INTO locked_keys, levels, stamps
  FROM gateway_lock_buckets(bucket_keys, capacities) AS locked;
  -- read once the locks are held: no bucket was written later than this
  now_ := clock_timestamp();
  FOR i IN 1 .. n LOOP
    j := array_position(locked_keys, bucket_keys[i]);
    IF refilled[j] IS NOT TRUE THEN
      levels[j] := least(capacities[i],
        levels[j] + greatest(0, extract(epoch FROM now_ - stamps[j])::double precision) * refill_rates[i]);
      refilled[j] := true;
    END IF;
    IF all_or_nothing THEN
      IF levels[j] < amounts[i] THEN
        short_index := i - 1;
        available := levels[j];
        retry_after_s := CASE WHEN refill_rates[i] > 0
          THEN ceil((amounts[i] - levels[j]) / refill_rates[i])
          ELSE 'Infinity'::double precision END;
        RETURN;
      END IF;
      levels[j] := levels[j] - amounts[i];
    ELSE
      levels[j] := least(capacities[i], levels[j] - amounts[i]);
    END IF;
  END LOOP;
  UPDATE rate_limit_buckets AS bucket SET tokens = taken.tokens, updated_at = now_
    FROM unnest(locked_keys, levels) AS taken(key, tokens)
    WHERE bucket.key = taken.key;
END
$$;
