/**
 * Migration 0019_codehost (spec 2.7, 4.8):
 *
 * - `codehost_connections`: the adapter-table shape (ownership, name, config,
 *   metadata, configVersion), the connection's state in `config` and the
 *   installing person's OAuth token sealed beside it.
 * - `codehost_states`: the authorization URLs' states, single use: a state is
 *   claimed by one conditional UPDATE, so two callbacks cannot both bind.
 * - `codehost_writes`: the journal of write tool calls (write replay): a row
 *   is written before the call is dispatched and settled with its outcome.
 * - `codehost_branches`: the branches a thread published (push ownership and
 *   the last pushed SHA merges check).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE codehost_connections (
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
  yield* sql`CREATE INDEX codehost_connections_workspace_order ON codehost_connections (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX codehost_connections_org_name ON codehost_connections (organization_id, name)`
  yield* sql`CREATE INDEX codehost_connections_installation ON codehost_connections (((config->>'installationId')))`
  yield* sql`CREATE TABLE codehost_states (
    nonce text PRIMARY KEY,
    connection_id text NOT NULL REFERENCES codehost_connections (id) ON DELETE CASCADE,
    expires_at text NOT NULL,
    used_at text,
    created_at text NOT NULL
  )`
  yield* sql`CREATE INDEX codehost_states_connection ON codehost_states (connection_id)`
  yield* sql`CREATE TABLE codehost_writes (
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tool_call_id text NOT NULL,
    tool_name text NOT NULL,
    status text NOT NULL,
    outcome jsonb,
    created_at text NOT NULL,
    settled_at text,
    PRIMARY KEY (run_id, tool_call_id)
  )`
  yield* sql`CREATE TABLE codehost_branches (
    repository text NOT NULL,
    branch text NOT NULL,
    thread_id text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    last_pushed_sha text,
    updated_at text NOT NULL,
    PRIMARY KEY (repository, branch)
  )`
})
