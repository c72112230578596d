/**
 * `npm run bench:scale`: what one node holds, on PostgreSQL with the scripted
 * model, over real HTTP on loopback (README "Scale per node"):
 *
 *   streams     open event streams of parked runs on one node: memory per
 *               stream, and approval-to-chunk latency with few and with all open
 *   parked      runs parked on approvals: memory as they accumulate, an idle
 *               node's cost, restart time, approval latency, with 0 and N parked
 *   throughput  the same closed-loop load on 1, 2, 3 runner processes
 *
 * Each part uses a fresh database `svc_scale_<random>` (dropped after it) and
 * prints markdown tables. Knobs (environment): SCALE_PARTS (default
 * `streams,parked,throughput`), SCALE_STREAMS (10000), SCALE_PROBES (50:
 * approvals timed per phase), SCALE_PARKED (100000), SCALE_PARK_CONCURRENCY
 * (32 clients parking runs), SCALE_CHECKPOINTS (4), SCALE_PROCESSES
 * (`1,2,3`), SCALE_CLIENTS (32), SCALE_TURNS_PER_CLIENT (40). A quick run:
 * `SCALE_STREAMS=500 SCALE_PARKED=2000 SCALE_TURNS_PER_CLIENT=5 npm run bench:scale`.
 *
 * 10,000 streams need as many open files in the service and in the stream
 * client (both inherit this process's limit; `ulimit -n` before starting).
 */
import { randomBytes } from "node:crypto"
import { runBenchmark } from "../support/Lifecycle.ts"
import { failures, reportFailures } from "../support/Load.ts"
import { autovacuumSetting, serverVersion } from "../support/Postgres.ts"
import { openFilesLimit } from "../support/ProcStats.ts"
import { startEverything } from "../support/Service.ts"
import { measureParked } from "./Parked.ts"
import { loadLine, machineLine, parkedTables, streamsTables, throughputTable } from "./Report.ts"
import { measureStreams } from "./Streams.ts"
import { measureThroughput } from "./Throughput.ts"

const envInt = (name: string, fallback: number): number => {
  const n = Number.parseInt(process.env[name] ?? "", 10)
  return Number.isFinite(n) && n > 0 ? n : fallback
}
const parts = new Set((process.env["SCALE_PARTS"] ?? "streams,parked,throughput").split(",").map((s) => s.trim()))
const streams = envInt("SCALE_STREAMS", 10_000)
const probes = envInt("SCALE_PROBES", 50)
const parkedTarget = envInt("SCALE_PARKED", 100_000)
const parkConcurrency = envInt("SCALE_PARK_CONCURRENCY", 32)
const processes = (process.env["SCALE_PROCESSES"] ?? "1,2,3").split(",").map((s) => Number.parseInt(s, 10)).filter((
  n
) => n > 0)
const clients = envInt("SCALE_CLIENTS", 32)
const turnsPerClient = envInt("SCALE_TURNS_PER_CLIENT", 40)
const apiKey = "sk_scale"
const database = () => `svc_scale_${randomBytes(6).toString("hex")}`

const section = (title: string, body: string) => console.log(`\n#### ${title}\n\n${body}`)

const main = async (): Promise<number> => {
  const t0 = performance.now()
  const files = openFilesLimit()
  if (parts.has("streams") && files !== undefined && files < streams + 1000) {
    throw new Error(
      `${streams} streams need about ${
        streams + 1000
      } open files per process; the limit is ${files} (raise it with ulimit -n)`
    )
  }
  console.log(
    `Machine: ${
      machineLine(await serverVersion())
    } (autovacuum ${await autovacuumSetting()}; the benchmark vacuums after creating runs)`
  )
  console.log(loadLine("Before"))
  const mcp = await startEverything()
  if (parts.has("streams")) {
    const r = await measureStreams({ database: database(), apiKey, mcp, streams, probes, parkConcurrency })
    section(`Open streams (${loadLine("load after")})`, streamsTables(r))
  }
  if (parts.has("parked")) {
    const r = await measureParked({
      database: database(),
      apiKey,
      mcp,
      parked: parkedTarget,
      concurrency: parkConcurrency,
      checkpoints: envInt("SCALE_CHECKPOINTS", 4),
      resumes: 10
    })
    section(`Parked runs (${loadLine("load after")})`, parkedTables(r))
  }
  if (parts.has("throughput")) {
    const names = new Map(processes.map((n) => [n, database()]))
    const rows = await measureThroughput({
      database: (n) => names.get(n) ?? "",
      apiKey,
      mcp,
      processes,
      clients,
      turnsPerClient
    })
    section(`Runner processes (${loadLine("load after")})`, throughputTable(rows))
  }
  console.log(`\nTotal ${((performance.now() - t0) / 1000).toFixed(0)} s.`)
  return failures.length > 0 ? 1 : 0
}

await runBenchmark(main, reportFailures)
