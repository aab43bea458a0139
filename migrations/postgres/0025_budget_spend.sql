-- Budget counters (src/budgets/store.ts): what each budget's scope spent in a calendar period
-- in UTC (a day, a week from Monday, a month) or in all (`total`, period_start = -infinity).
-- The period is computed here, from the database's clock, so that gateways with skewed clocks
-- agree at midnight. A row is deleted by the gateway's sweep once expires_at (the period's end
-- plus a day) has passed; a `total` row never expires. No index on expires_at, as for the rate
-- limit buckets (0004): every call rewrites its rows, and the sweep reads in bounded batches.
CREATE TABLE budget_spend (
  key text NOT NULL,
  period_start timestamptz NOT NULL,
  spent double precision NOT NULL DEFAULT 0,
  expires_at timestamptz,
  PRIMARY KEY (key, period_start)
);

-- The period of `period` ('day', 'week', 'month', 'total') that `at` falls in: its start and its
-- end (NULL for 'total'), in UTC. date_trunc's week starts on Monday (ISO). A function of its
-- arguments only, so the tests can ask it about any instant.
CREATE OR REPLACE FUNCTION gateway_budget_period(period text, at timestamptz, OUT period_start timestamptz, OUT period_end timestamptz)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF period = 'total' THEN
    period_start := '-infinity'::timestamptz;
    period_end := NULL;
  ELSIF period IN ('day', 'week', 'month') THEN
    period_start := date_trunc(period, at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    period_end := (date_trunc(period, at AT TIME ZONE 'UTC') + ('1 ' || period)::interval) AT TIME ZONE 'UTC';
  ELSE
    RAISE EXCEPTION 'gateway_budget_period: unknown period %', period;
  END IF;
END
$$;

-- Charges budget counters in their current period, on the database's clock. With
-- all_or_nothing (a reservation), every counter takes its amount only if each has
-- spent + amount <= limit; otherwise nothing is written and the one row answered is the first
-- counter short (refused). Without it (a settlement), each amount is added (a negative one gives
-- back, never below 0) and every counter answers its spend before and after. The rows are
-- locked in key order (the INSERT locks those that exist as it meets them, as in 0004), so
-- calls on overlapping counters never deadlock. A key named twice is charged twice.
CREATE OR REPLACE FUNCTION gateway_charge_budgets(
  counter_keys text[],
  periods text[],
  limits double precision[],
  amounts double precision[],
  all_or_nothing boolean
)
RETURNS TABLE (counter_index integer, spent_before double precision, spent_after double precision, resets_at timestamptz, refused boolean)
LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(cardinality(counter_keys), 0);
  now_ timestamptz := clock_timestamp();
  starts timestamptz[] := '{}';
  ends timestamptz[] := '{}';
  expiries timestamptz[] := '{}';
  locked_keys text[];
  levels double precision[];
  befores double precision[] := '{}';
  afters double precision[] := '{}';
  period_start_ timestamptz;
  period_end_ timestamptz;
  i integer;
  j integer;
BEGIN
  IF coalesce(cardinality(periods), 0) <> n OR coalesce(cardinality(limits), 0) <> n OR coalesce(cardinality(amounts), 0) <> n THEN
    RAISE EXCEPTION 'gateway_charge_budgets: the arrays differ in length';
  END IF;
  IF n = 0 THEN
    RETURN;
  END IF;
  FOR i IN 1 .. n LOOP
    SELECT p.period_start, p.period_end INTO period_start_, period_end_ FROM gateway_budget_period(periods[i], now_) AS p;
    starts[i] := period_start_;
    ends[i] := period_end_;
    expiries[i] := period_end_ + interval '1 day';
  END LOOP;
  INSERT INTO budget_spend AS counter (key, period_start, spent, expires_at)
    SELECT DISTINCT ON (given.key) given.key, given.start, 0, given.expiry
    FROM unnest(counter_keys, starts, expiries) WITH ORDINALITY AS given(key, start, expiry, ord)
    ORDER BY given.key, given.ord
    ON CONFLICT (key, period_start) DO UPDATE SET spent = counter.spent WHERE false;
  SELECT array_agg(locked.key ORDER BY locked.key), array_agg(locked.spent ORDER BY locked.key)
  INTO locked_keys, levels
  FROM (
    SELECT counter.key, counter.spent FROM budget_spend AS counter
    JOIN (SELECT DISTINCT given.key, given.start FROM unnest(counter_keys, starts) AS given(key, start)) AS wanted
      ON counter.key = wanted.key AND counter.period_start = wanted.start
    ORDER BY counter.key
    FOR UPDATE OF counter
  ) AS locked;
  FOR i IN 1 .. n LOOP
    j := array_position(locked_keys, counter_keys[i]);
    befores[i] := levels[j];
    IF all_or_nothing AND levels[j] + amounts[i] > limits[i] THEN
      RETURN QUERY SELECT i - 1, levels[j], levels[j], ends[i], true;
      RETURN;
    END IF;
    levels[j] := greatest(0, levels[j] + amounts[i]);
    afters[i] := levels[j];
  END LOOP;
  UPDATE budget_spend AS counter SET spent = charged.spent
    FROM unnest(locked_keys, levels) AS charged(key, spent)
    WHERE counter.key = charged.key AND counter.period_start = starts[array_position(counter_keys, charged.key)];
  RETURN QUERY SELECT (given.ord - 1)::integer, given.before, given.after, given.resets, false
    FROM unnest(befores, afters, ends) WITH ORDINALITY AS given(before, after, resets, ord)
    ORDER BY given.ord;
END
$$;
