/**
 * Migration 0007_event_notify: a write to a run's stream wakes followers on
 * other nodes: one NOTIFY per statement and run, raised by the database in the
 * statement that stores the chunks (no extra round trip for the writer).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION svc_run_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('svc_run_events', r.run_id) FROM (SELECT DISTINCT run_id FROM new_rows) r;
      RETURN NULL;
    END $$`)
  yield* sql.unsafe(`CREATE TRIGGER run_events_notify AFTER INSERT ON run_events
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION svc_run_events_notify()`)
})
