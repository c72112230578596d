/**
 * The schema migrations, run at start (the same on PostgreSQL and PGlite): the
 * manifest of `migrations/NNNN_name.ts`, one migration a file, in order.
 *
 * The migrator records each migration it applies as (id, name) in
 * `svc_migrations` and then runs only the ids above the latest recorded. So an
 * entry's id and name never change once released, a released file is never
 * edited (a change to the schema is a new migration), and a new migration takes
 * the next id after the last: a gap (9, 12, 21, 22) is never filled, as no
 * database that has gone past it would run it.
 */
import { Effect, Layer } from "effect"
import { Migrator, type SqlClient } from "effect/sql"
import Migration0001 from "./migrations/0001_foundation.ts"
import Migration0002 from "./migrations/0002_adapters.ts"
import Migration0003 from "./migrations/0003_runs.ts"
import Migration0004 from "./migrations/0004_followups.ts"
import Migration0005 from "./migrations/0005_recovery.ts"
import Migration0006 from "./migrations/0006_interactions.ts"
import Migration0007 from "./migrations/0007_event_notify.ts"
import Migration0008 from "./migrations/0008_executors.ts"
import Migration0010 from "./migrations/0010_limits.ts"
import Migration0011 from "./migrations/0011_interact.ts"
import Migration0013 from "./migrations/0013_context_prefix.ts"
import Migration0014 from "./migrations/0014_workspace_spec.ts"
import Migration0015 from "./migrations/0015_workspace_snapshots.ts"
import Migration0016 from "./migrations/0016_artifacts.ts"
import Migration0017 from "./migrations/0017_result_deliveries.ts"
import Migration0018 from "./migrations/0018_workers.ts"
import Migration0019 from "./migrations/0019_codehost.ts"
import Migration0020 from "./migrations/0020_fencing.ts"
import Migration0023 from "./migrations/0023_scale.ts"
import Migration0024 from "./migrations/0024_idempotency_owner.ts"
import Migration0025 from "./migrations/0025_runner_address.ts"
import Migration0026 from "./migrations/0026_api_key_roles.ts"
import Migration0027 from "./migrations/0027_organization_ids.ts"
import Migration0028 from "./migrations/0028_sealed_snapshots.ts"
import Migration0029 from "./migrations/0029_blob_chunks.ts"
import Migration0030 from "./migrations/0030_upload_slots.ts"
import Migration0031 from "./migrations/0031_environments.ts"
import Migration0033 from "./migrations/0033_runner_repoll.ts"
import Migration0034 from "./migrations/0034_browser_profiles.ts"

type Migration = Effect.Effect<void, unknown, SqlClient.SqlClient>

/** Every migration in order: the id and name the migrator records, and the migration. */
export const manifest: ReadonlyArray<readonly [id: number, name: string, migration: Migration]> = [
  [1, "foundation", Migration0001],
  [2, "adapters", Migration0002],
  [3, "runs", Migration0003],
  [4, "followups", Migration0004],
  [5, "recovery", Migration0005],
  [6, "interactions", Migration0006],
  [7, "event_notify", Migration0007],
  [8, "executors", Migration0008],
  [10, "limits", Migration0010],
  [11, "interact", Migration0011],
  [13, "context_prefix", Migration0013],
  [14, "workspace_spec", Migration0014],
  [15, "workspace_snapshots", Migration0015],
  [16, "artifacts", Migration0016],
  [17, "result_deliveries", Migration0017],
  [18, "workers", Migration0018],
  [19, "codehost", Migration0019],
  [20, "fencing", Migration0020],
  [23, "scale", Migration0023],
  [24, "idempotency_owner", Migration0024],
  [25, "runner_address", Migration0025],
  [26, "api_key_roles", Migration0026],
  [27, "organization_ids", Migration0027],
  [28, "sealed_snapshots", Migration0028],
  [29, "blob_chunks", Migration0029],
  [30, "upload_slots", Migration0030],
  [31, "environments", Migration0031],
  [33, "runner_repoll", Migration0033],
  [34, "browser_profiles", Migration0034]
]

/** The manifest keyed `NNNN_name`, as `Migrator.fromRecord` reads it (it parses the id and the name back). */
const records = Object.fromEntries(
  manifest.map(([id, name, migration]) => [`${String(id).padStart(4, "0")}_${name}`, migration])
)

/** Applies the migrations the database has not recorded yet; answers those it applied, as [id, name]. */
export const run = Migrator.make({})({ loader: Migrator.fromRecord(records), table: "svc_migrations" })

/** Runs the migrations while the layer builds. */
export const layer = Layer.effectDiscard(run.pipe(Effect.orDie))
