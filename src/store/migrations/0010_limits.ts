/**
 * Migration 0010_limits: the state of rate limits and quotas, shared by every
 * process on the database (README "Rate limits and quotas").
 *
 * - `rate_buckets`: one token bucket per API key and per organization.
 *   `svc_rate_take` refills and takes from several buckets in one call (one
 *   round trip): each row is locked in name order, and a request is admitted
 *   only when every bucket has a token, so a refusal costs none.
 * - `svc_workspace_slot`: whether a workspace may start one more run. It
 *   serializes the run starts of one workspace on an advisory lock held until
 *   the starting statement commits, and counts with a snapshot taken after the
 *   lock (a VOLATILE function's queries see what committed before them), so
 *   concurrent starts on any node never pass the cap.
 * - `runs_org_created`: the spend of an organization in a period is read from
 *   the runs it created since the period began.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNLOGGED TABLE rate_buckets (
    bucket text PRIMARY KEY,
    tokens double precision NOT NULL,
    updated_ms bigint NOT NULL
  )`
  // buckets: [{ "bucket": text, "perMs": number, "burst": number }, ...]
  yield* sql.unsafe(`CREATE FUNCTION svc_rate_take(buckets jsonb, now_ms bigint)
    RETURNS TABLE (bucket_key text, remaining double precision, admitted boolean) LANGUAGE plpgsql AS $$
    DECLARE
      names text[];
      per_ms double precision[];
      bursts double precision[];
      avail double precision[] := '{}';
      admit boolean := true;
      i integer;
      had double precision;
      since bigint;
    BEGIN
      SELECT array_agg(e->>'bucket' ORDER BY ord), array_agg((e->>'perMs')::float8 ORDER BY ord), array_agg((e->>'burst')::float8 ORDER BY ord)
        INTO names, per_ms, bursts FROM jsonb_array_elements(buckets) WITH ORDINALITY AS t(e, ord);
      -- Locked in name order, so concurrent callers never wait on each other in a cycle.
      FOR i IN SELECT u.ord FROM unnest(names) WITH ORDINALITY AS u(b, ord) ORDER BY u.b LOOP
        SELECT r.tokens, r.updated_ms INTO had, since FROM rate_buckets r WHERE r.bucket = names[i] FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO rate_buckets (bucket, tokens, updated_ms) VALUES (names[i], bursts[i], now_ms) ON CONFLICT (bucket) DO NOTHING;
          SELECT r.tokens, r.updated_ms INTO had, since FROM rate_buckets r WHERE r.bucket = names[i] FOR UPDATE;
        END IF;
        avail[i] := least(bursts[i], had + greatest(0, now_ms - since) * per_ms[i]);
        IF avail[i] < 1 THEN admit := false; END IF;
      END LOOP;
      FOR i IN 1 .. array_length(names, 1) LOOP
        bucket_key := names[i];
        remaining := CASE WHEN admit THEN avail[i] - 1 ELSE avail[i] END;
        admitted := admit;
        UPDATE rate_buckets r SET tokens = remaining, updated_ms = greatest(r.updated_ms, now_ms) WHERE r.bucket = bucket_key;
        RETURN NEXT;
      END LOOP;
    END $$`)
  yield* sql.unsafe(`CREATE FUNCTION svc_workspace_slot(org text, ws text, cap integer) RETURNS boolean
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('svc_workspace_runs/' || org || '/' || ws, 0));
      RETURN (SELECT count(*) FROM runs r WHERE r.organization_id = org AND r.workspace_id = ws
        AND r.status IN ('queued', 'preparing', 'running')) < cap;
    END $$`)
  yield* sql`CREATE INDEX runs_org_created ON runs (organization_id, created_at)`
})
