/**
 * `npm run bench`: end-to-end turn throughput and latency of the real service
 * over real HTTP on PostgreSQL, with the built-in `scripted` model.
 *
 * It creates a fresh database `svc_bench_<random>` on 127.0.0.1:5432 (trust
 * auth, user postgres; override with BENCH_POSTGRES_URL), starts
 * `@modelcontextprotocol/server-everything` (Streamable HTTP) and
 * `node src/main.ts` as child processes on free loopback ports, then measures
 * two scenarios, each at concurrency 1 and 64:
 *
 *   text  one model step: `hello` -> `Echo: hello`
 *   mcp   two model steps: `/tool mcp__everything__echo {"message":"hi"}`
 *         (one MCP tools/call to server-everything), then the answer
 *
 * A turn is `POST /v1/threads/:id/messages` with the default streaming
 * (SSE) response, read to `data: [DONE]`. Each client owns one thread (a
 * thread holds one run at a time) and sends its turns in sequence. Every
 * turn is checked (status 200, `[DONE]`, no error chunk, the expected
 * answer); failures are printed with their body and make the exit code 1.
 *
 * Knobs (environment): BENCH_TURNS_C1 (default 200), BENCH_TURNS_PER_CLIENT
 * (default 20, at concurrency 64), BENCH_CONCURRENCY (default 64),
 * BENCH_ACCESS_LOG=1 (start the service without SVC_QUIET, i.e. with its
 * per-request access log). Child processes are killed and the database is
 * dropped on exit, failure, Ctrl-C or SIGTERM.
 */
import { randomBytes } from "node:crypto"
import * as os from "node:os"
import type { Scenario, TurnResult } from "./support/Http.ts"
import { createDatabase, runBenchmark } from "./support/Lifecycle.ts"
import { failures, reportFailures, runClients, sleep } from "./support/Load.ts"
import { backendPids, dbStats, serverVersion } from "./support/Postgres.ts"
import { hasProc, procCpu } from "./support/ProcStats.ts"
import { createScenarioAgents, createThreads, mcpScenario, textScenario } from "./support/Scenarios.ts"
import { startEverything, startService } from "./support/Service.ts"
import { fmt, percentile, table } from "./support/Table.ts"

const apiKey = "sk_bench"

const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name]
  const n = raw === undefined ? Number.NaN : Number.parseInt(raw, 10)
  return Number.isFinite(n) && n > 0 ? n : fallback
}
const turnsAtOne = envInt("BENCH_TURNS_C1", 200)
const turnsPerClient = envInt("BENCH_TURNS_PER_CLIENT", 20)
const highConcurrency = envInt("BENCH_CONCURRENCY", 64)
const accessLog = process.env["BENCH_ACCESS_LOG"] === "1"

interface CpuSnapshot {
  readonly at: number
  readonly service: number
  readonly mcp: number
  /** CPU seconds per backend pid. */
  readonly postgres: ReadonlyMap<number, number>
  readonly bench: number
}

// ---- measurement --------------------------------------------------------------

interface Measured {
  readonly scenario: string
  readonly concurrency: number
  readonly turns: number
  readonly failed: number
  readonly turnsPerSec: number
  readonly p50: number
  readonly p99: number
  readonly ttfc50: number
  readonly ttfc99: number
  /** Latency p50 over the first and the last tenth of each client's turns (history growth). */
  readonly firstTenthP50: number
  readonly lastTenthP50: number
  readonly xactsPerTurn: number
  readonly rowsWrittenPerTurn: number
  /** Cores busy during the measured window. */
  readonly cpu:
    | { readonly service: number; readonly postgres: number; readonly mcp: number; readonly bench: number }
    | undefined
}

const measure = async (
  ctx: {
    readonly base: string
    readonly dbName: string
    readonly servicePid: number | undefined
    readonly mcpPid: number | undefined
  },
  scenario: Scenario,
  threads: ReadonlyArray<string>,
  perClient: number,
  warmupPerClient: number
): Promise<Measured> => {
  await runClients(ctx.base, apiKey, threads, warmupPerClient, scenario)
  // pg_stat_database is flushed by backends at most once a second.
  await sleep(1_100)
  const before = await dbStats(ctx.dbName)
  const cpu = (at: number, pids: ReadonlyArray<number>): CpuSnapshot => {
    const usage = process.cpuUsage()
    return {
      at,
      service: procCpu(ctx.servicePid),
      mcp: procCpu(ctx.mcpPid),
      postgres: new Map(pids.map((pid) => [pid, procCpu(pid)])),
      bench: (usage.user + usage.system) / 1e6
    }
  }
  const cpu0 = cpu(performance.now(), await backendPids(ctx.dbName))
  const results = await runClients(ctx.base, apiKey, threads, perClient, scenario)
  const cpu1 = cpu(performance.now(), await backendPids(ctx.dbName))
  await sleep(1_100)
  const after = await dbStats(ctx.dbName)
  // Backends opened during the window count from zero; those closed during it are missed.
  let postgresSeconds = 0
  for (const [pid, seconds] of cpu1.postgres) postgresSeconds += seconds - (cpu0.postgres.get(pid) ?? 0)

  const all = results.flat()
  const ok = all.filter((r) => r.ok)
  const lat = ok.map((r) => r.latencyMs).sort((a, b) => a - b)
  const ttfc = ok.map((r) => r.ttfcMs).filter((n) => !Number.isNaN(n)).sort((a, b) => a - b)
  const tenth = Math.max(1, Math.floor(perClient / 10))
  const p50Of = (pick: (rs: Array<TurnResult>) => Array<TurnResult>) =>
    percentile(results.flatMap((rs) => pick(rs).filter((r) => r.ok).map((r) => r.latencyMs)).sort((a, b) => a - b), 50)
  const wallS = (cpu1.at - cpu0.at) / 1000
  const busy = (a: number, b: number) => (b - a) / wallS
  return {
    scenario: scenario.name,
    concurrency: threads.length,
    turns: all.length,
    failed: all.length - ok.length,
    turnsPerSec: ok.length / wallS,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    ttfc50: percentile(ttfc, 50),
    ttfc99: percentile(ttfc, 99),
    firstTenthP50: p50Of((rs) => rs.slice(0, tenth)),
    lastTenthP50: p50Of((rs) => rs.slice(-tenth)),
    xactsPerTurn: (after.xacts - before.xacts) / all.length,
    rowsWrittenPerTurn: (after.written - before.written) / all.length,
    cpu: hasProc
      ? {
        service: busy(cpu0.service, cpu1.service),
        postgres: postgresSeconds / wallS,
        mcp: busy(cpu0.mcp, cpu1.mcp),
        bench: busy(cpu0.bench, cpu1.bench)
      }
      : undefined
  }
}

// ---- main -----------------------------------------------------------------------

const dbName = `svc_bench_${randomBytes(6).toString("hex")}`

const main = async (): Promise<number> => {
  const t0 = performance.now()
  const loadAtStart = os.loadavg()
  const pgVersion = await serverVersion()
  await createDatabase(dbName)

  const mcp = await startEverything()
  const service = await startService({ database: dbName, apiKey, accessLog })
  const base = service.base
  const startupS = (performance.now() - t0) / 1000

  // Resources: one tool server, one agent per scenario, one thread per client.
  const agents = await createScenarioAgents(base, apiKey, mcp.url)
  const scenarios: ReadonlyArray<{ readonly scenario: Scenario; readonly agentId: string }> = [
    { scenario: textScenario, agentId: agents.text },
    { scenario: mcpScenario, agentId: agents.mcp }
  ]

  const ctx = { base, dbName, servicePid: service.pid, mcpPid: mcp.started.child.pid }
  const rows: Array<Measured> = []
  for (const { scenario, agentId } of scenarios) {
    for (const concurrency of [1, highConcurrency]) {
      const threads = await createThreads(base, apiKey, agentId, concurrency)
      const perClient = concurrency === 1 ? turnsAtOne : turnsPerClient
      const warmup = concurrency === 1 ? 20 : 2
      process.stderr.write(
        `${scenario.name} at concurrency ${concurrency}: ${warmup * concurrency} warm-up + ${
          perClient * concurrency
        } turns ... `
      )
      const row = await measure(ctx, scenario, threads, perClient, warmup)
      process.stderr.write(`${fmt(row.turnsPerSec)} turns/s${row.failed > 0 ? `, ${row.failed} FAILED` : ""}\n`)
      rows.push(row)
    }
  }

  const cpus = os.cpus()
  console.log("")
  console.log(
    `Machine: ${cpus[0]?.model.trim() ?? "unknown CPU"} x ${cpus.length}, ${
      (os.totalmem() / 2 ** 30).toFixed(1)
    } GiB RAM, ` +
      `${os.type()} ${os.release()}, Node ${process.version}, ${pgVersion}`
  )
  console.log(
    `Load average before the run: ${
      loadAtStart.map((l) => l.toFixed(2)).join(" ")
    } (other work on the host skews the figures)`
  )
  console.log(
    `Service: node src/main.ts on PostgreSQL, ${
      accessLog ? "access log ON (no SVC_QUIET)" : "SVC_QUIET=1"
    }, scripted model; client on the same host (loopback)\n`
  )
  console.log(table(
    ["scenario", "concurrency", "turns", "turns/s", "p50 ms", "p99 ms", "TTFC p50 ms", "TTFC p99 ms"],
    rows.map((r) => [
      r.scenario,
      String(r.concurrency),
      r.failed > 0 ? `${r.turns} (${r.failed} failed)` : String(r.turns),
      fmt(r.turnsPerSec),
      fmt(r.p50),
      fmt(r.p99),
      fmt(r.ttfc50),
      fmt(r.ttfc99)
    ])
  ))
  console.log("")
  console.log(table(
    [
      "scenario",
      "concurrency",
      "PG round trips/turn",
      "svc CPU ms/turn",
      "PG rows written/turn",
      "p50 first 10%",
      "p50 last 10%",
      "CPU svc",
      "CPU pg",
      "CPU mcp",
      "CPU bench"
    ],
    rows.map((r) => [
      r.scenario,
      String(r.concurrency),
      fmt(r.xactsPerTurn),
      r.cpu === undefined ? "-" : fmt((r.cpu.service * 1000) / r.turnsPerSec, 2),
      fmt(r.rowsWrittenPerTurn),
      fmt(r.firstTenthP50),
      fmt(r.lastTenthP50),
      r.cpu === undefined ? "-" : fmt(r.cpu.service, 2),
      r.cpu === undefined ? "-" : fmt(r.cpu.postgres, 2),
      r.cpu === undefined ? "-" : fmt(r.cpu.mcp, 2),
      r.cpu === undefined ? "-" : fmt(r.cpu.bench, 2)
    ])
  ))
  console.log(
    "\nCPU columns: cores busy during the measured window (1.00 = one core), from /proc; CPU pg counts the backends connected to" +
      " the benchmark database. PG round trips/turn: commits + rollbacks in pg_stat_database per turn; a turn's path has no" +
      " multi-statement transaction (each statement is its own commit), so this counts its statements, background work of" +
      " the runner (node heartbeats, recovery pass, shard locks) included. svc CPU ms/turn: CPU svc x 1000 / turns per second." +
      ` Startup (database, MCP server, service) took ${startupS.toFixed(1)} s; total ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s.`
  )

  return failures.length > 0 ? 1 : 0
}

await runBenchmark(main, reportFailures)
