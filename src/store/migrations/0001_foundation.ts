/**
 * Migration 0001_foundation: API keys, agents, threads and Idempotency-Key
 * records. Timestamps are ISO-8601 UTC text of fixed width, so they sort as
 * text; lists page on `(created_at DESC, id DESC)` within a workspace.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
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
