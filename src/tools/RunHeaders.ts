/**
 * The headers every request the service makes to a tool (MCP servers, HTTP
 * connections) carries for a run (spec 6.1): `Svc-Run-Id` (the run that made
 * the call: a worker's own id for a worker call), `Svc-Root-Run-Id` (its
 * tree's root), and `Svc-Worker-Ref` for a worker's calls only.
 */
import type { RunId } from "../../domain/Ids.ts"

export interface RunIdentity {
  readonly runId: RunId
  readonly rootRunId: RunId
  readonly workerRef: string | null
}

export const runHeaders = (id: RunIdentity): Readonly<Record<string, string>> => ({
  "svc-run-id": id.runId,
  "svc-root-run-id": id.rootRunId,
  ...(id.workerRef === null ? {} : { "svc-worker-ref": id.workerRef })
})
