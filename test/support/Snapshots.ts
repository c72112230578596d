/**
 * Workspace snapshots as the database holds them, for tests that read or
 * stage them: the stored row (sealed bytes, key id, version), what a master
 * key opens it to, and a row replaced as another node, an older release or an
 * attacker would have left it (the version moved on, so the next run restores
 * it).
 */
import type { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { SealedState } from "../../src/secrets/SealedState.ts"
import { parseMasterKey, SecretBox } from "../../src/secrets/SecretBox.ts"

const StoredRow = Schema.Struct({
  version: Schema.Number,
  key_id: Schema.NullOr(Schema.String),
  bytes: Schema.Number,
  sha256: Schema.String,
  data: Schema.Uint8Array
})
export type StoredSnapshot = typeof StoredRow.Type

export const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex")

const masterKeyOf = (base64Key: string) => {
  const parsed = parseMasterKey(base64Key)
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
}

/** The id the service gives a master key (given as base64). */
export const keyIdOf = (base64Key: string) => masterKeyOf(base64Key).id

/** The runtime-state sealer of a service configured with these master keys (base64). */
export const sealerOf = (current: string, previous: ReadonlyArray<string> = []) =>
  SealedState.make(SecretBox.make(masterKeyOf(current), previous.map(masterKeyOf)))

/** The thread's stored snapshot, if any. */
export const storedSnapshot = (sql: PgClient.PgClient, threadId: string) =>
  sql`SELECT version::int AS version, key_id, bytes::int AS bytes, sha256, data FROM workspace_snapshots
    WHERE thread_id = ${threadId}`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(StoredRow))),
    Effect.map((rows): StoredSnapshot | undefined => rows[0]),
    Effect.orDie
  )

/**
 * Replaces the thread's snapshot with `data` under `keyId` (null: a snapshot stored before sealing)
 * as a newer version, its size and SHA-256 those of `data`: only the seal can tell it apart.
 */
export const replaceSnapshot = (
  sql: PgClient.PgClient,
  threadId: string,
  data: Uint8Array,
  keyId: string | null
) =>
  sql`UPDATE workspace_snapshots SET version = version + 1, data = ${Buffer.from(data)}, key_id = ${keyId},
    bytes = ${data.byteLength}, sha256 = ${sha256(data)} WHERE thread_id = ${threadId}`.pipe(Effect.orDie)
