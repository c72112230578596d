/** Persistence of agents. SQL failures are defects (500 with a reference). */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { Agent, AgentConfig, agentConfigOf } from "../../domain/Agent.ts"
import { AgentId } from "../../domain/Ids.ts"
import { Metadata } from "../../domain/Metadata.ts"
import type { Position } from "./Cursor.ts"

export interface AgentRow extends Position {
  readonly id: AgentId
  readonly agent: Agent
  readonly organizationId: string
  readonly workspaceId: string
}

const Row = Schema.Struct({
  id: AgentId,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  config: AgentConfig,
  metadata: Metadata,
  config_version: Schema.Number,
  created_at: Schema.String,
  updated_at: Schema.String
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))
const decodeRow = Schema.decodeUnknownEffect(Row)

const toRow = (r: typeof Row.Type): AgentRow => ({
  id: r.id,
  createdAt: r.created_at,
  organizationId: r.organization_id,
  workspaceId: r.workspace_id,
  agent: {
    id: r.id,
    object: "agent",
    ...r.config,
    metadata: r.metadata,
    configVersion: r.config_version,
    createdAt: r.created_at,
    updatedAt: r.updated_at
  }
})

/** An agent row read as JSON by another repository's query (e.g. with its thread). */
export const agentRowOf = (json: unknown): Effect.Effect<AgentRow> =>
  decodeRow(json).pipe(Effect.map(toRow), Effect.orDie)

export class AgentRepo extends Context.Service<AgentRepo, {
  readonly insert: (row: AgentRow) => Effect.Effect<void>
  readonly find: (id: AgentId) => Effect.Effect<Option.Option<AgentRow>>
  readonly list: (
    organizationId: string,
    workspaceId: string,
    limit: number,
    after: Position | undefined
  ) => Effect.Effect<ReadonlyArray<AgentRow>>
  readonly update: (agent: Agent) => Effect.Effect<void>
  readonly remove: (id: AgentId) => Effect.Effect<void>
}>()("svc/AgentRepo") {
  static readonly layer = Layer.effect(AgentRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const select = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.map((rows) => rows.map(toRow)), Effect.orDie)

      return {
        insert: Effect.fn("AgentRepo.insert")(function*(row: AgentRow) {
          const a = row.agent
          yield* sql`INSERT INTO agents (id, organization_id, workspace_id, config, metadata, config_version, created_at, updated_at)
            VALUES (${a.id}, ${row.organizationId}, ${row.workspaceId}, ${sql.json(agentConfigOf(a))}, ${
            sql.json(a.metadata)
          },
                    ${a.configVersion}, ${a.createdAt}, ${a.updatedAt})`.pipe(Effect.orDie)
        }),
        find: Effect.fn("AgentRepo.find")(function*(id: AgentId) {
          const rows = yield* select(sql`SELECT * FROM agents WHERE id = ${id}`)
          return Option.fromNullishOr(rows[0])
        }),
        list: Effect.fn("AgentRepo.list")(function*(
          organizationId: string,
          workspaceId: string,
          limit: number,
          after: Position | undefined
        ) {
          return yield* select(
            after === undefined
              ? sql`SELECT * FROM agents WHERE organization_id = ${organizationId} AND workspace_id = ${workspaceId}
                    ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
              : sql`SELECT * FROM agents WHERE organization_id = ${organizationId} AND workspace_id = ${workspaceId}
                    AND (created_at, id) < (${after.createdAt}, ${after.id})
                    ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
          )
        }),
        update: Effect.fn("AgentRepo.update")(function*(a: Agent) {
          yield* sql`UPDATE agents SET config = ${sql.json(agentConfigOf(a))}, metadata = ${sql.json(a.metadata)},
            config_version = ${a.configVersion}, updated_at = ${a.updatedAt} WHERE id = ${a.id}`.pipe(Effect.orDie)
        }),
        remove: Effect.fn("AgentRepo.remove")(function*(id: AgentId) {
          yield* sql`DELETE FROM agents WHERE id = ${id}`.pipe(Effect.orDie)
        })
      }
    })
  )
}
