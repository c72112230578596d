/**
 * `npm run bench:uploads`: what one tenant's uploads cost every other tenant.
 * The service runs on the embedded store (PGlite, the default install) and on
 * PostgreSQL, the artifact store on the same database (the default); tenant A
 * uploads files through `POST /v1/files` while tenant B, another
 * organization, calls `GET /v1/agents` in a closed loop (one request at a
 * time, 20 ms apart). Phases, each probed the same way:
 *
 *   idle        nobody uploads
 *   one upload  one upload of BENCH_UPLOAD_MIB (default 32, SVC_FILE_MAX_BYTES' default)
 *   N at once   BENCH_UPLOADS (default 4) uploads at once, each with its own API key of A's workspace
 *
 * It prints, per store and phase, B's latency (p50, p99, max) and each
 * upload's status and duration. The bytes are random (nothing compresses).
 * Knobs: BENCH_UPLOAD_STORES (`embedded,postgres`), BENCH_UPLOAD_MIB,
 * BENCH_UPLOADS, BENCH_IDLE_MS (3000). Child processes are stopped and the
 * PostgreSQL database dropped on exit.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { createDatabase, runBenchmark } from "../support/Lifecycle.ts"
import { stopChild } from "../support/Processes.ts"
import { type Service, serviceEnv, startService } from "../support/Service.ts"
import { fmt, percentile, sortedAsc, table } from "../support/Table.ts"

const envInt = (name: string, fallback: number): number => {
  const n = Number.parseInt(process.env[name] ?? "", 10)
  return Number.isFinite(n) && n > 0 ? n : fallback
}
const stores = (process.env["BENCH_UPLOAD_STORES"] ?? "embedded,postgres").split(",").map((s) => s.trim())
const uploadBytes = envInt("BENCH_UPLOAD_MIB", 32) * 1024 * 1024
const concurrent = envInt("BENCH_UPLOADS", 4)
const idleMs = envInt("BENCH_IDLE_MS", 3000)

const probeKey = "sk_bench_other"
const uploadKeys = Array.from({ length: concurrent }, (_, i) => `sk_bench_upload_${i}`)
const keysSetting = [
  `${probeKey}:org_other:prod`,
  ...uploadKeys.map((key) => `${key}:org_uploads:prod`)
].join(",")

interface Probes {
  readonly latencies: Array<number>
  readonly failures: Array<string>
}

/** B's closed loop of `GET /v1/agents` until `stop` resolves. */
const probe = async (base: string, stop: Promise<unknown>): Promise<Probes> => {
  const result: Probes = { latencies: [], failures: [] }
  let done = false
  void stop.finally(() => {
    done = true
  })
  while (!done) {
    const t0 = performance.now()
    const response = await fetch(`${base}/v1/agents`, { headers: { authorization: `Bearer ${probeKey}` } })
    await response.arrayBuffer()
    result.latencies.push(performance.now() - t0)
    if (response.status !== 200) result.failures.push(String(response.status))
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return result
}

interface Uploaded {
  readonly status: number
  readonly ms: number
}

const upload = async (base: string, key: string, data: Uint8Array<ArrayBuffer>): Promise<Uploaded> => {
  const body = new FormData()
  body.append("file", new Blob([data]), "random.bin")
  const t0 = performance.now()
  const response = await fetch(`${base}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body
  })
  const text = await response.text()
  if (response.status !== 200) console.error(`upload answered ${response.status}: ${text.slice(0, 300)}`)
  return { status: response.status, ms: performance.now() - t0 }
}

interface Phase {
  readonly store: string
  readonly phase: string
  readonly probes: Probes
  readonly uploads: ReadonlyArray<Uploaded>
}

const measure = async (service: Service, store: string): Promise<Array<Phase>> => {
  const base = service.base
  const data = () => new Uint8Array(randomBytes(uploadBytes))
  // Warm both tenants' paths (authentication caches, the first statements).
  await probe(base, new Promise((resolve) => setTimeout(resolve, 200)))
  await upload(base, uploadKeys[0], new Uint8Array(randomBytes(1024)))

  const idle = await probe(base, new Promise((resolve) => setTimeout(resolve, idleMs)))
  const one = data()
  const single = upload(base, uploadKeys[0], one)
  const singleProbes = await probe(base, single)
  const many = uploadKeys.map(() => data())
  const parallel = Promise.all(uploadKeys.map((key, i) => upload(base, key, many[i])))
  const parallelProbes = await probe(base, parallel)
  return [
    { store, phase: "idle", probes: idle, uploads: [] },
    { store, phase: `one upload of ${uploadBytes / 2 ** 20} MiB`, probes: singleProbes, uploads: [await single] },
    { store, phase: `${concurrent} uploads at once`, probes: parallelProbes, uploads: await parallel }
  ]
}

/** The service's environment: on PostgreSQL with DATABASE_URL, embedded without it. */
const env = async (database: string | undefined, dataDir: string): Promise<Record<string, string>> => {
  const { DATABASE_URL, ...rest } = await serviceEnv({
    database: database ?? "embedded",
    apiKey: probeKey,
    env: { SVC_API_KEYS: keysSetting, SVC_DATA_DIR: dataDir }
  })
  return database === undefined ? rest : { ...rest, DATABASE_URL }
}

const phases: Array<Phase> = []

const main = async (): Promise<number> => {
  console.log(
    `uploads: ${concurrent} x ${uploadBytes / 2 ** 20} MiB; ${os.cpus().length} cores (${
      os.cpus()[0]?.model ?? "?"
    }), load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`
  )
  for (const store of stores) {
    const dataDir = mkdtempSync(join(os.tmpdir(), "svc-bench-uploads-"))
    const database = store === "postgres" ? `svc_bench_uploads_${randomBytes(6).toString("hex")}` : undefined
    if (database !== undefined) await createDatabase(database)
    const service = await startService(
      { database: database ?? "embedded", apiKey: probeKey, readyTimeoutMs: 300_000 },
      await env(database, dataDir)
    )
    try {
      phases.push(...await measure(service, store))
    } finally {
      await stopChild(service.started.child)
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return phases.every((p) => p.probes.failures.length === 0) ? 0 : 1
}

const report = () => {
  if (phases.length === 0) return
  console.log(
    "\n" + table(
      ["store", "phase", "B requests", "B p50 ms", "B p99 ms", "B max ms", "B failed", "uploads: status, s"],
      phases.map((p) => {
        const sorted = sortedAsc(p.probes.latencies)
        return [
          p.store,
          p.phase,
          String(sorted.length),
          fmt(percentile(sorted, 50)),
          fmt(percentile(sorted, 99)),
          fmt(sorted.at(-1) ?? Number.NaN),
          String(p.probes.failures.length),
          p.uploads.map((u) => `${u.status} ${fmt(u.ms / 1000)}`).join(", ") || "-"
        ]
      })
    )
  )
}

void runBenchmark(main, report)
