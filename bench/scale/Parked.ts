/**
 * How many parked runs one node carries. Runs are parked on approvals through
 * the API (Parking.ts); at checkpoints the database is vacuumed (as
 * autovacuum would) and the node's memory is taken after a full collection
 * (a parked run holds no fiber, so it should not grow with them).
 * With none and with all of them parked: what an idle node costs PostgreSQL
 * (rows its background work reads per second, the recovery pass included),
 * a `/metrics` scrape (its gauges count parked runs), a restart (spawn to
 * "Listening on", and to the first answered request), memory after the
 * restart, and how fast an approval resumes a run.
 */
import { createDatabase, dropDatabase } from "../support/Lifecycle.ts"
import { sleep } from "../support/Load.ts"
import { dbStats, vacuum } from "../support/Postgres.ts"
import type { McpServer } from "../support/Service.ts"
import { type MeasuredNode, type Memory, startMeasuredNode, type StartUp } from "./Node.ts"
import { approveAndFollow, createParkingAgent, type ParkedRun, parkMany } from "./Parking.ts"

export interface Checkpoint {
  readonly parked: number
  /** Runs parked per second so far (checkpoints excluded). */
  readonly rate: number
  readonly memory: Memory
}

/** The node at rest with `parked` runs parked. */
export interface AtRest {
  readonly parked: number
  /** Rows read per second by the database on behalf of the idle node (index and sequential scans). */
  readonly rowsReadPerSec: number
  readonly statementsPerSec: number
  readonly idleCores: number
  readonly scrapeMs: number
  readonly restart: StartUp
  /** Memory a few seconds after the restart. */
  readonly memory: Memory
  /** Approval to the resumed stream's first chunk and end, a few runs one after the other. */
  readonly resume: ReadonlyArray<{ readonly firstChunkMs: number; readonly doneMs: number }>
}

export interface ParkedResult {
  readonly checkpoints: ReadonlyArray<Checkpoint>
  readonly empty: AtRest
  readonly full: AtRest
  readonly createSeconds: number
}

export interface ParkedOptions {
  readonly database: string
  readonly apiKey: string
  readonly mcp: McpServer
  readonly parked: number
  readonly concurrency: number
  readonly checkpoints: number
  /** Runs approved at rest (each state), one after the other. */
  readonly resumes: number
}

const idleWindowMs = 10_000

const atRest = async (
  node: MeasuredNode,
  options: ParkedOptions,
  parked: number,
  toResume: ReadonlyArray<ParkedRun>,
  probePath: string
): Promise<AtRest> => {
  const restart = await node.restart(probePath)
  await sleep(5_000)
  const memory = await node.memory()
  // pg_stat_database is flushed by backends at most once a second.
  const s0 = await dbStats(options.database)
  const cpu0 = node.cpu()
  await sleep(idleWindowMs)
  const s1 = await dbStats(options.database)
  const idleCores = (node.cpu() - cpu0) / (idleWindowMs / 1000)
  const t0 = performance.now()
  await (await fetch(`${node.base()}/metrics`)).text()
  const scrapeMs = performance.now() - t0
  const resume = []
  for (const run of toResume) resume.push(await approveAndFollow(node.base(), options.apiKey, run))
  const perSec = (n: number) => n / (idleWindowMs / 1000)
  return {
    parked,
    rowsReadPerSec: perSec(s1.returned + s1.fetched - s0.returned - s0.fetched),
    statementsPerSec: perSec(s1.xacts - s0.xacts),
    idleCores,
    scrapeMs,
    restart,
    memory,
    resume
  }
}

export const measureParked = async (options: ParkedOptions): Promise<ParkedResult> => {
  const { apiKey: key } = options
  await createDatabase(options.database)
  const node = await startMeasuredNode(
    { database: options.database, apiKey: key, env: { SVC_METRICS: "on" }, readyTimeoutMs: 600_000 },
    "/v1/agents?limit=1"
  )
  try {
    const agentId = await createParkingAgent(node.base(), key, options.mcp.url)
    // A few runs for the empty node to resume, parked and approved before the measured ones.
    const warm = await parkMany(node.base(), key, agentId, options.resumes, 1, options.resumes, async () => {})
    await vacuum(options.database)
    const empty = await atRest(node, options, 0, warm, "/v1/agents?limit=1")

    const checkpoints: Array<Checkpoint> = [{ parked: 0, rate: Number.NaN, memory: await node.memory() }]
    let createSeconds = 0
    const every = Math.max(1, Math.ceil(options.parked / options.checkpoints))
    process.stderr.write(`parked: parking ${options.parked} runs, ${options.concurrency} at a time ...\n`)
    const parked = await node.explainFailure(() =>
      parkMany(node.base(), key, agentId, options.parked, options.concurrency, every, async (progress) => {
        createSeconds = progress.seconds
        await vacuum(options.database)
        const memory = await node.memory()
        checkpoints.push({ parked: progress.done, rate: progress.done / progress.seconds, memory })
        process.stderr.write(
          `  checkpoint: ${progress.done} parked, heap ${(memory.heapUsed / 2 ** 20).toFixed(1)} MiB\n`
        )
      })
    )
    process.stderr.write("parked: restarting the node with every run parked ...\n")
    const full = await atRest(
      node,
      options,
      parked.length,
      parked.slice(-options.resumes),
      `/v1/runs/${parked[0].runId}`
    )
    return { checkpoints, empty, full, createSeconds }
  } finally {
    await node.stop()
    await dropDatabase(options.database)
  }
}
