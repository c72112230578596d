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
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import * as os from "node:os"
import { fileURLToPath } from "node:url"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"

const root = fileURLToPath(new URL("..", import.meta.url))
const everythingEntry = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
const adminUrl = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
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

// ---- PostgreSQL administration (the project's own client, no extra dependency) ----

type Row = Readonly<Record<string, unknown>>

const adminQuery = (query: string): Promise<ReadonlyArray<Row>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({ url: Redacted.make(adminUrl), maxConnections: 1, applicationName: "svc-bench-admin" }),
        (sql) => sql.unsafe<Row>(query)
      )
    ).pipe(Effect.provide(Reactivity.layer))
  )

const databaseUrl = (name: string): string => {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

interface DbStats {
  readonly xacts: number
  readonly written: number
  readonly fetched: number
}

const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "string" || typeof v === "bigint" ? Number(v) : 0)

const dbStats = async (name: string): Promise<DbStats> => {
  const rows = await adminQuery(
    `SELECT xact_commit + xact_rollback AS xacts, tup_inserted + tup_updated + tup_deleted AS written,
            tup_fetched AS fetched FROM pg_stat_database WHERE datname = '${name}'`
  )
  const row = rows[0] ?? {}
  return { xacts: num(row["xacts"]), written: num(row["written"]), fetched: num(row["fetched"]) }
}

// ---- processes --------------------------------------------------------------

const children = new Set<ChildProcess>()

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

interface Started {
  readonly child: ChildProcess
  readonly match: RegExpExecArray
  /** The last 64 KiB the process printed (stdout and stderr). */
  readonly output: () => string
}

/** Spawns `node <args>` and resolves once its output matches `ready`; output keeps being drained. */
const startNode = (label: string, args: ReadonlyArray<string>, env: Record<string, string>, ready: RegExp): Promise<Started> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let out = ""
    let done = false
    const timer = setTimeout(() => {
      if (done) return
      done = true
      reject(new Error(`${label} printed no ready line within 60 s:\n${out}`))
    }, 60_000)
    const onData = (d: Buffer) => {
      out = (out + d.toString()).slice(-65_536)
      if (done) return
      const match = ready.exec(out)
      if (match) {
        done = true
        clearTimeout(timer)
        resolve({ child, match, output: () => out })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code, signal) => {
      children.delete(child)
      if (!done) {
        done = true
        clearTimeout(timer)
        reject(new Error(`${label} exited (${code ?? signal}) before it was ready:\n${out}`))
      } else if (!stopping) {
        childDied = true
        console.error(`\n${label} exited unexpectedly (${code ?? signal}):\n${out.slice(-4000)}`)
      }
    })
  })

let stopping = false
/** A child process exited while it was needed: stop sending turns. */
let childDied = false

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const kill = setTimeout(() => child.kill("SIGKILL"), 5_000)
    child.once("exit", () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill("SIGTERM")
  })

// ---- CPU accounting (Linux /proc; skipped elsewhere) ---------------------------

const clockTicks = (() => {
  try {
    return Number.parseInt(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim(), 10) || 100
  } catch {
    return 100
  }
})()
const hasProc = (() => {
  try {
    readFileSync("/proc/self/stat")
    return true
  } catch {
    return false
  }
})()

/** CPU seconds (user + system, all threads) of a process, or 0 (also when it is gone). */
const procCpu = (pid: number | undefined): number => {
  if (pid === undefined || !hasProc) return 0
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / clockTicks
  } catch {
    return 0
  }
}

/** Server process ids of the connections to the benchmark database (the service's pool and its LISTEN connection). */
const backendPids = async (name: string): Promise<ReadonlyArray<number>> =>
  hasProc ? (await adminQuery(`SELECT pid FROM pg_stat_activity WHERE datname = '${name}'`)).map((r) => num(r["pid"])) : []

interface CpuSnapshot {
  readonly at: number
  readonly service: number
  readonly mcp: number
  /** CPU seconds per backend pid. */
  readonly postgres: ReadonlyMap<number, number>
  readonly bench: number
}

// ---- HTTP -------------------------------------------------------------------

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** An error's message with its causes (fetch hides the reason in `cause`). */
const explain = (e: unknown): string => {
  const parts: Array<string> = []
  for (let cur: unknown = e; cur !== undefined && cur !== null && parts.length < 4;) {
    parts.push(cur instanceof Error ? `${cur.name}: ${cur.message}` : String(cur))
    cur = cur instanceof Error ? cur.cause : undefined
  }
  return parts.join(" <- ")
}

const api = async (base: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
  let response: Response
  let text: string
  try {
    response = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? null : JSON.stringify(body)
    })
    text = await response.text()
  } catch (e) {
    throw new Error(`${method} ${path} failed: ${explain(e)}`)
  }
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
  const json: unknown = JSON.parse(text)
  if (!isRecord(json)) throw new Error(`${method} ${path} answered a non-object: ${text}`)
  return json
}

const idOf = (resource: Record<string, unknown>): string => {
  const id = resource["id"]
  if (typeof id !== "string") throw new Error(`no id in ${JSON.stringify(resource)}`)
  return id
}

interface Scenario {
  readonly name: string
  readonly input: string
  /** Every turn's stream must contain this. */
  readonly expect: string
}

interface TurnResult {
  readonly ok: boolean
  readonly latencyMs: number
  readonly ttfcMs: number
  readonly error?: string
}

const failureMarkers = ['"type":"error"', '"tool-output-error"', '"finishReason":"error"']

const turn = async (base: string, threadId: string, scenario: Scenario): Promise<TurnResult> => {
  const started = performance.now()
  let ttfc = Number.NaN
  try {
    const response = await fetch(`${base}/v1/threads/${threadId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ input: scenario.input })
    })
    let text = ""
    if (response.body !== null) {
      const decoder = new TextDecoder()
      for await (const bytes of response.body) {
        text += decoder.decode(bytes, { stream: true })
        if (Number.isNaN(ttfc) && /(^|\n)data:/.test(text)) ttfc = performance.now() - started
      }
      text += decoder.decode()
    }
    const latencyMs = performance.now() - started
    const describe = (why: string) => `${why}; status ${response.status}, body:\n${text}`
    if (response.status !== 200) return { ok: false, latencyMs, ttfcMs: ttfc, error: describe("not 200") }
    if (!text.endsWith("data: [DONE]\n\n")) return { ok: false, latencyMs, ttfcMs: ttfc, error: describe("no data: [DONE] at the end") }
    const marker = failureMarkers.find((m) => text.includes(m))
    if (marker !== undefined) return { ok: false, latencyMs, ttfcMs: ttfc, error: describe(`stream contains ${marker}`) }
    if (!text.includes(scenario.expect)) return { ok: false, latencyMs, ttfcMs: ttfc, error: describe(`stream lacks ${scenario.expect}`) }
    return { ok: true, latencyMs, ttfcMs: ttfc }
  } catch (e) {
    return { ok: false, latencyMs: performance.now() - started, ttfcMs: ttfc, error: `request failed: ${explain(e)}` }
  }
}

// ---- measurement --------------------------------------------------------------

/** Nearest-rank percentile of an ascending array. */
const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]

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
  readonly cpu: { readonly service: number; readonly postgres: number; readonly mcp: number; readonly bench: number } | undefined
}

const failures: Array<string> = []

const runClients = async (
  base: string,
  threads: ReadonlyArray<string>,
  perClient: number,
  scenario: Scenario
): Promise<Array<Array<TurnResult>>> =>
  Promise.all(threads.map(async (threadId) => {
    const results: Array<TurnResult> = []
    for (let i = 0; i < perClient && !interrupted && !childDied; i++) {
      const r = await turn(base, threadId, scenario)
      if (!r.ok && r.error !== undefined) failures.push(`[${scenario.name}, thread ${threadId}, turn ${i + 1}] ${r.error}`)
      results.push(r)
    }
    return results
  }))

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const measure = async (
  ctx: { readonly base: string; readonly dbName: string; readonly servicePid: number | undefined; readonly mcpPid: number | undefined },
  scenario: Scenario,
  threads: ReadonlyArray<string>,
  perClient: number,
  warmupPerClient: number
): Promise<Measured> => {
  await runClients(ctx.base, threads, warmupPerClient, scenario)
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
  const results = await runClients(ctx.base, threads, perClient, scenario)
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

// ---- output -------------------------------------------------------------------

const fmt = (n: number, digits = 1) => (Number.isNaN(n) ? "-" : n.toFixed(digits))

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: ReadonlyArray<string>) =>
    "| " + cells.map((c, i) => (i < 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ") + " |"
  return [line(header), "|" + widths.map((w, i) => (i < 1 ? ":" : "-") + "-".repeat(w) + (i < 1 ? "-" : ":")).join("|") + "|", ...rows.map(line)]
    .join("\n")
}

// ---- main -----------------------------------------------------------------------

const dbName = `svc_bench_${randomBytes(6).toString("hex")}`
let dbCreated = false

let interrupted = false
let cleaning: Promise<void> | undefined

/** Kills the child processes, then drops the database; every caller awaits the same work. */
const cleanup = (): Promise<void> =>
  (cleaning ??= (async () => {
    stopping = true
    await Promise.all([...children].map(stopChild))
    if (dbCreated) {
      try {
        await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
      } catch (e) {
        console.error(`could not drop database ${dbName}: ${explain(e)}`)
      }
    }
  })())

// First signal: stop the children so every pending step fails fast and main's
// `finally` cleans up; a second signal (or 20 s) cleans up and exits at once.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) {
      void cleanup().finally(() => process.exit(130))
      return
    }
    interrupted = true
    stopping = true
    console.error(`\n${signal}: stopping and cleaning up`)
    for (const child of children) void stopChild(child)
    setTimeout(() => void cleanup().finally(() => process.exit(130)), 20_000)
  })
}

const main = async (): Promise<number> => {
  const t0 = performance.now()
  const loadAtStart = os.loadavg()
  const versionRows = await adminQuery("SELECT version() AS version")
  const pgVersion = String(versionRows[0]?.["version"] ?? "unknown")
  // Marked first: a signal during CREATE still drops it (DROP ... IF EXISTS).
  dbCreated = true
  await adminQuery(`CREATE DATABASE ${dbName}`)
  if (interrupted) throw new Error("interrupted")

  const mcpPort = await freePort()
  const mcp = await startNode("server-everything", [everythingEntry, "streamableHttp"], { PORT: String(mcpPort) }, /listening on port \d+/)

  const serviceEnv: Record<string, string> = {
    DATABASE_URL: databaseUrl(dbName),
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    SVC_RUNNER_PORT: String(await freePort()),
    SVC_API_KEYS: `${apiKey}:org_bench:prod`,
    SVC_MASTER_KEY: randomBytes(32).toString("base64"),
    SVC_ALLOW_PRIVATE_URLS: "1"
  }
  if (!accessLog) serviceEnv["SVC_QUIET"] = "1"
  const service = await startNode("service", ["src/main.ts"], serviceEnv, /Listening on (http:\/\/[^\s]+)/)
  const base = service.match[1]
  const startupS = (performance.now() - t0) / 1000

  // Resources: one tool server, one agent per scenario, one thread per client.
  const toolServer = await api(base, "POST", "/v1/tool-servers", {
    name: "everything",
    transport: "http",
    url: `http://127.0.0.1:${mcpPort}/mcp`
  })
  const textAgent = idOf(await api(base, "POST", "/v1/agents", {}))
  const mcpAgent = idOf(await api(base, "POST", "/v1/agents", { capabilities: { mcp: { toolServerIds: [idOf(toolServer)] } } }))
  const threadsFor = (agentId: string, n: number) =>
    Promise.all(Array.from({ length: n }, async () => idOf(await api(base, "POST", "/v1/threads", { agentId }))))

  const scenarios: ReadonlyArray<{ readonly scenario: Scenario; readonly agentId: string }> = [
    { scenario: { name: "text (1 step)", input: "hello", expect: '"delta":"hello"' }, agentId: textAgent },
    {
      scenario: { name: "mcp (2 steps, 1 MCP call)", input: '/tool mcp__everything__echo {"message":"hi"}', expect: '"tool-output-available"' },
      agentId: mcpAgent
    }
  ]

  const ctx = { base, dbName, servicePid: service.child.pid, mcpPid: mcp.child.pid }
  const rows: Array<Measured> = []
  for (const { scenario, agentId } of scenarios) {
    for (const concurrency of [1, highConcurrency]) {
      const threads = await threadsFor(agentId, concurrency)
      const perClient = concurrency === 1 ? turnsAtOne : turnsPerClient
      const warmup = concurrency === 1 ? 20 : 2
      process.stderr.write(`${scenario.name} at concurrency ${concurrency}: ${warmup * concurrency} warm-up + ${perClient * concurrency} turns ... `)
      const row = await measure(ctx, scenario, threads, perClient, warmup)
      process.stderr.write(`${fmt(row.turnsPerSec)} turns/s${row.failed > 0 ? `, ${row.failed} FAILED` : ""}\n`)
      rows.push(row)
    }
  }

  const cpus = os.cpus()
  console.log("")
  console.log(
    `Machine: ${cpus[0]?.model.trim() ?? "unknown CPU"} x ${cpus.length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `${os.type()} ${os.release()}, Node ${process.version}, ${pgVersion}`
  )
  console.log(`Load average before the run: ${loadAtStart.map((l) => l.toFixed(2)).join(" ")} (other work on the host skews the figures)`)
  console.log(`Service: node src/main.ts on PostgreSQL, ${accessLog ? "access log ON (no SVC_QUIET)" : "SVC_QUIET=1"}, scripted model; client on the same host (loopback)\n`)
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
    ["scenario", "concurrency", "PG round trips/turn", "svc CPU ms/turn", "PG rows written/turn", "p50 first 10%", "p50 last 10%", "CPU svc", "CPU pg", "CPU mcp", "CPU bench"],
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
      ` Startup (database, MCP server, service) took ${startupS.toFixed(1)} s; total ${((performance.now() - t0) / 1000).toFixed(1)} s.`
  )

  return failures.length > 0 ? 1 : 0
}

const reportFailures = () => {
  if (failures.length === 0) return
  console.log(`\n${failures.length} turn(s) FAILED; the first ${Math.min(5, failures.length)}:`)
  for (const f of failures.slice(0, 5)) console.log(`\n${f}`)
}

let exitCode = 1
try {
  exitCode = await main()
} catch (e) {
  if (!interrupted) console.error(`\nbenchmark failed: ${explain(e)}`)
} finally {
  reportFailures()
  await cleanup()
}
process.exit(interrupted ? 130 : exitCode)
