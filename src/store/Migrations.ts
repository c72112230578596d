/**
 * Schema migrations, run at start (the same on PostgreSQL and PGlite).
 * Timestamps are ISO-8601 UTC text of fixed width, so they sort as text.
 */
import { Effect, Layer } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { m0016_artifacts } from "./ArtifactsMigration.ts"
import { m0019_codehost } from "./CodehostMigration.ts"
import { m0020_fencing } from "./FencingMigration.ts"
import { m0024_idempotency_owner } from "./IdempotencyOwnerMigration.ts"
import { m0010_limits } from "./LimitsMigration.ts"
import { m0015_workspace_snapshots } from "./MigrationsWorkspaces.ts"
import { m0017_result_deliveries } from "./ResultDeliveriesMigration.ts"
import { m0025_runner_address } from "./RunnerAddressMigration.ts"
import { m0023_scale } from "./ScaleMigration.ts"
import { m0018_workers } from "./WorkersMigration.ts"

const m0001_foundation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE api_keys (
    id text PRIMARY KEY,
    key_hash text NOT NULL UNIQUE,
    key_prefix text NOT NULL,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    source text NOT NULL,
    created_at text NOT NULL,
    revoked_at text
  )`
  yield* sql`CREATE TABLE agents (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    config jsonb NOT NULL,
    metadata jsonb NOT NULL,
    config_version integer NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL
  )`
  yield* sql`CREATE INDEX agents_workspace_order ON agents (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE threads (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    agent_id text NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    context jsonb NOT NULL,
    context_refresh boolean NOT NULL DEFAULT false,
    band text,
    data_handling text,
    time_zone text,
    status text NOT NULL,
    workspace jsonb,
    metadata jsonb NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL
  )`
  yield* sql`CREATE INDEX threads_agent_order ON threads (agent_id, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE idempotency_keys (
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    method text NOT NULL,
    path text NOT NULL,
    key text NOT NULL,
    body_hash text NOT NULL,
    state text NOT NULL,
    status integer,
    response jsonb,
    created_at text NOT NULL,
    PRIMARY KEY (organization_id, workspace_id, method, path, key)
  )`
  yield* sql`CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`
})

/**
 * Adapters and secrets share one shape: scalar columns for what is queried
 * (ownership, name, order), the resource-specific fields in `config`, and an
 * optional sealed secret (AES-256-GCM ciphertext and the id of its key).
 */
export const adapterTables = [
  "secrets",
  "secret_contexts",
  "tool_approval_hooks",
  "result_handlers",
  "tool_servers",
  "http_connections"
] as const
/** The adapter-shaped tables; code-hosting connections came later, in their own migration (0019_codehost). */
export type AdapterTable = (typeof adapterTables)[number] | "codehost_connections"

const m0002_adapters = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const table of adapterTables) {
    yield* sql.unsafe(`CREATE TABLE ${table} (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      workspace_id text NOT NULL,
      name text NOT NULL,
      config jsonb NOT NULL,
      metadata jsonb NOT NULL,
      config_version integer NOT NULL,
      sealed text,
      key_id text,
      created_at text NOT NULL,
      updated_at text NOT NULL
    )`)
    yield* sql.unsafe(
      `CREATE INDEX ${table}_workspace_order ON ${table} (organization_id, workspace_id, created_at DESC, id DESC)`
    )
    yield* sql.unsafe(`CREATE INDEX ${table}_org_name ON ${table} (organization_id, name)`)
  }
  // Names unique per organization (spec: Names; secrets 4.9).
  for (const table of ["secrets", "secret_contexts", "tool_servers", "http_connections"]) {
    yield* sql.unsafe(`CREATE UNIQUE INDEX ${table}_org_name_unique ON ${table} (organization_id, name)`)
  }
})

/**
 * Runs: the row carries status and totals; `plan` freezes what the run
 * captured at start (agent config, contexts, capability snapshot, options).
 * `run_events` is the durable stream (one row per chunk, ordered by seq);
 * `run_steps` checkpoints each completed step (model response and tool
 * results) so a resumed run never repeats one.
 */
const m0003_runs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE runs (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    thread_id text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    agent_id text NOT NULL,
    status text NOT NULL,
    terminal_reason text,
    error jsonb,
    usage jsonb NOT NULL,
    config jsonb NOT NULL,
    plan jsonb NOT NULL,
    metadata jsonb NOT NULL,
    idempotency_key text,
    created_at text NOT NULL,
    started_at text,
    completed_at text,
    updated_at text NOT NULL
  )`
  yield* sql`CREATE INDEX runs_workspace_order ON runs (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_thread_order ON runs (thread_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_active ON runs (status) WHERE status NOT IN ('completed', 'failed', 'cancelled')`
  yield* sql`ALTER TABLE threads ADD COLUMN active_run_id text`
  yield* sql`CREATE TABLE run_events (
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    chunk json NOT NULL,
    PRIMARY KEY (run_id, seq)
  )`
  yield* sql`CREATE TABLE run_steps (
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step integer NOT NULL,
    messages jsonb NOT NULL,
    usage jsonb NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (run_id, step)
  )`
})

/** Plain-text messages held while a run is active, delivered at its next turn boundary. */
const m0004_followups = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE run_followups (
    seq bigserial,
    id text PRIMARY KEY,
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    text text NOT NULL,
    status text NOT NULL,
    queued_at text NOT NULL,
    claimed_at text
  )`
  yield* sql`CREATE INDEX run_followups_run ON run_followups (run_id, seq)`
})

/** Recovery bookkeeping: how often the recovery pass re-dispatched a stalled run. */
const m0005_recovery = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE runs ADD COLUMN recovery_attempts integer NOT NULL DEFAULT 0`
})

/**
 * Human in the loop: interactions; the parked step of a run (`park`: what a
 * resumed run needs to finish that step), its deadline, and a generation
 * counter so each resume is a distinct persisted Start; remembered 'once'
 * approvals per thread.
 */
const m0006_interactions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE interactions (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    root_run_id text NOT NULL,
    worker_ref text,
    thread_id text NOT NULL,
    agent_id text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    step_number integer NOT NULL,
    tool_name text NOT NULL,
    tool_call_id text NOT NULL,
    hook_id text,
    input jsonb,
    preview jsonb,
    decision text,
    reason text,
    request jsonb,
    resolution jsonb,
    expires_at text,
    created_at text NOT NULL,
    resolved_at text,
    updated_at text NOT NULL
  )`
  yield* sql`CREATE INDEX interactions_workspace_order ON interactions (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX interactions_run ON interactions (run_id, status)`
  yield* sql`ALTER TABLE runs ADD COLUMN generation integer NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE runs ADD COLUMN park jsonb`
  yield* sql`ALTER TABLE runs ADD COLUMN park_deadline text`
  yield* sql`CREATE TABLE approval_memory (
    thread_id text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    tool_name text NOT NULL,
    input_hash text NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (thread_id, tool_name, input_hash)
  )`
})

/**
 * A write to a run's stream wakes followers on other nodes: one NOTIFY per
 * statement and run, raised by the database in the statement that stores the
 * chunks (no extra round trip for the writer).
 */
const m0007_event_notify = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION svc_run_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('svc_run_events', r.run_id) FROM (SELECT DISTINCT run_id FROM new_rows) r;
      RETURN NULL;
    END $$`)
  yield* sql.unsafe(`CREATE TRIGGER run_events_notify AFTER INSERT ON run_events
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION svc_run_events_notify()`)
})

/**
 * Which process executes a run (`executor`), and which processes are alive
 * (`svc_nodes`, a heartbeat each): a run whose executor stopped beating is
 * dispatched again by the recovery pass, so a dispatch needs no durable
 * message of its own.
 */
const m0008_executors = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE runs ADD COLUMN executor text`
  yield* sql`CREATE TABLE svc_nodes (id text PRIMARY KEY, started_at timestamptz NOT NULL, heartbeat_at timestamptz NOT NULL)`
})

/**
 * Interactions the run's end cancelled (run cancelled, interaction_timeout),
 * as opposed to those a client settled: a late answer still records on the
 * former (spec 3.2 "pending or any"), the 409 rule guards only the latter.
 * Follow-ups get a `delivered` status, set with their replay.
 */
const m0011_interact = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE interactions ADD COLUMN closed_by_run boolean NOT NULL DEFAULT false`
  // Follow-ups claimed before delivery was recorded were delivered with their claim.
  yield* sql`UPDATE run_followups SET status = 'delivered' WHERE status = 'claimed'`
})

/**
 * forceRefresh is a moment, not a flag: a run rebuilds the thread's cached
 * context prefix when a refresh was asked for after its previous turn began.
 */
const m0013_context_prefix = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE threads ADD COLUMN context_refresh_at text`
  yield* sql`ALTER TABLE threads DROP COLUMN context_refresh`
})

/**
 * A thread's managed workspace runs on the spec its agent had when the thread
 * was created (spec 2.1.3 rule 4, 4.1 rule 6): pinned on the thread.
 */
const m0014_workspace_spec = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE threads ADD COLUMN workspace_spec jsonb`
  yield* sql`UPDATE threads t SET workspace_spec = a.config->'workspace' FROM agents a
    WHERE a.id = t.agent_id AND t.workspace IS NOT NULL AND a.config->'workspace'->>'type' = 'managed'`
})

export const migrations = {
  "0001_foundation": m0001_foundation,
  "0002_adapters": m0002_adapters,
  "0003_runs": m0003_runs,
  "0004_followups": m0004_followups,
  "0005_recovery": m0005_recovery,
  "0006_interactions": m0006_interactions,
  "0007_event_notify": m0007_event_notify,
  "0008_executors": m0008_executors,
  "0010_limits": m0010_limits,
  "0011_interact": m0011_interact,
  "0013_context_prefix": m0013_context_prefix,
  "0014_workspace_spec": m0014_workspace_spec,
  "0015_workspace_snapshots": m0015_workspace_snapshots,
  "0016_artifacts": m0016_artifacts,
  "0017_result_deliveries": m0017_result_deliveries,
  "0018_workers": m0018_workers,
  "0019_codehost": m0019_codehost,
  "0020_fencing": m0020_fencing,
  "0023_scale": m0023_scale,
  "0024_idempotency_owner": m0024_idempotency_owner,
  "0025_runner_address": m0025_runner_address
}

export const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "svc_migrations" })

/** Runs the migrations while the layer builds. */
export const layer = Layer.effectDiscard(run.pipe(Effect.orDie))
