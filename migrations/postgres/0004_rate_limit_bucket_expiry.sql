-- Rate limit buckets expire, as they do in Redis. `full_at` is when a bucket will have refilled
-- to its capacity: from then on its row says nothing a missing row does not (a missing bucket is
-- a full one), so the gateway deletes such rows in the background. NULL: never (a bucket that
-- does not refill; or a row written before this column, until it is written again).
-- No index on it: every request rewrites its buckets' rows, and an index on a column each write
-- changes would turn those in-place (HOT) updates into ones that update every index; the sweep
-- reads the table in bounded batches instead.
ALTER TABLE rate_limit_buckets ADD COLUMN full_at timestamptz;

-- As before, but the rows that exist are locked by the INSERT as it meets them (ON CONFLICT DO
-- UPDATE ... WHERE false locks a row without writing it), in key order: between the INSERT and
-- the SELECT, the sweep can no longer delete a bucket this call found. A key named twice is
-- inserted once, with the capacity it first comes with.
CREATE OR REPLACE FUNCTION gateway_lock_buckets(bucket_keys text[], capacities double precision[])
RETURNS TABLE (bucket_key text, bucket_tokens double precision, bucket_updated_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rate_limit_buckets AS bucket (key, tokens, updated_at, full_at)
    SELECT DISTINCT ON (given.key) given.key, given.capacity, clock_timestamp(), clock_timestamp()
    FROM unnest(bucket_keys, capacities) WITH ORDINALITY AS given(key, capacity, position)
    ORDER BY given.key, given.position
    ON CONFLICT (key) DO UPDATE SET tokens = bucket.tokens WHERE false;
  RETURN QUERY
    SELECT bucket.key, bucket.tokens, bucket.updated_at
    FROM rate_limit_buckets AS bucket
    WHERE bucket.key = ANY (bucket_keys)
    ORDER BY bucket.key
    FOR UPDATE;
END
$$;

-- As before (0002_api_keys_and_rate_limits.sql), and each bucket written gets its `full_at`.
CREATE OR REPLACE FUNCTION gateway_take_from_buckets(
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
  bucket_capacities double precision[] := '{}';
  bucket_rates double precision[] := '{}';
  full_ats timestamptz[] := '{}';
  refilled boolean[] := '{}';
  seconds_to_full double precision;
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
      bucket_capacities[j] := capacities[i];
      bucket_rates[j] := refill_rates[i];
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
  FOR j IN 1 .. cardinality(locked_keys) LOOP
    IF levels[j] >= bucket_capacities[j] THEN
      full_ats[j] := now_;
    ELSIF bucket_rates[j] > 0 THEN
      seconds_to_full := (bucket_capacities[j] - levels[j]) / bucket_rates[j];
      -- past about 30 years, as good as never (and no interval overflows)
      full_ats[j] := CASE WHEN seconds_to_full < 1e9 THEN now_ + seconds_to_full * interval '1 second' END;
    ELSE
      full_ats[j] := NULL;
    END IF;
  END LOOP;
  UPDATE rate_limit_buckets AS bucket SET tokens = taken.tokens, updated_at = now_, full_at = taken.full_at
    FROM unnest(locked_keys, levels, full_ats) AS taken(key, tokens, full_at)
    WHERE bucket.key = taken.key;
END
$$;
