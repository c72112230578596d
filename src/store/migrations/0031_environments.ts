/**
 * Migration 0031_environments: remote workspaces (issue 31). `environments`
 * has the adapter shape (0002_adapters; the token's SHA-256 in `config`, found
 * by its own index); `environment_runners` holds the runners connected now
 * (one row per runner process, its heartbeat); `environment_calls` carries
 * the tool calls of runs to runners across the cluster: a run's node inserts
 * a call, a runner polling any node claims it, its result comes back in the
 * row (EnvironmentCalls).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE environments (
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
  )`
  yield* sql`CREATE INDEX environments_workspace_order
    ON environments (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX environments_org_name ON environments (organization_id, name)`
  yield* sql`CREATE UNIQUE INDEX environments_token ON environments ((config->>'tokenHash'))`
  yield* sql`CREATE TABLE environment_runners (
    id text PRIMARY KEY,
    environment_id text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    token_hash text NOT NULL,
    host_name text NOT NULL,
    version text NOT NULL,
    connected_at timestamptz NOT NULL DEFAULT now(),
    last_heartbeat_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX environment_runners_environment ON environment_runners (environment_id, last_heartbeat_at)`
  yield* sql`CREATE TABLE environment_calls (
    id text PRIMARY KEY,
    environment_id text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    tool text NOT NULL,
    input jsonb NOT NULL,
    retryable boolean NOT NULL,
    state text NOT NULL,
    runner_id text,
    attempts integer NOT NULL DEFAULT 0,
    result jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    claimed_at timestamptz
  )`
  yield* sql`CREATE INDEX environment_calls_pending ON environment_calls (environment_id, created_at) WHERE state = 'pending'`
})
