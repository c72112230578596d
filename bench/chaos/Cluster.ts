/**
 * The chaos run's cluster: runner processes (`node src/main.ts`) and one
 * `client`-role API node on one fresh PostgreSQL database, all on loopback.
 * A runner keeps its ports across restarts (as a restarted host would); its
 * node id (the `executor` it writes on runs) is read from `svc_nodes` once it
 * listens. `kill` is SIGKILL; it records which runs were executing there and
 * how far their streams had got, for the failover figures.
 */
import { Effect, Scope, Semaphore } from "effect"
import * as ServiceProcess from "../../test/support/ServiceProcess.ts"
import { query, testDatabase } from "../../test/support/TestDatabase.ts"
import { freePort } from "../../test/support/TestServer.ts"

export const apiKey = "sk_chaos"

export interface Runner {
  readonly index: number
  /** The API's base URL (its port is kept across restarts). */
  readonly url: string
  alive: boolean
  nodeId: string | undefined
  process: ServiceProcess.Launched | undefined
}

/** A run that was executing on a killed runner, and the last chunk stored before the kill. */
export interface Orphan {
  readonly runId: string
  readonly lastSeq: number
}

export interface Kill {
  readonly runner: number
  readonly nodeId: string
  /** Epoch ms when the process had exited. */
  readonly at: number
  readonly orphans: ReadonlyArray<Orphan>
}

export interface Cluster {
  readonly databaseUrl: string
  /** The API-only node (never killed). */
  readonly client: string
  readonly runners: ReadonlyArray<Runner>
  /** Base URLs of every node that is up now (the client first). */
  readonly live: () => ReadonlyArray<string>
  readonly kill: (index: number) => Effect.Effect<Kill>
  readonly restart: (index: number) => Effect.Effect<void, Error>
  /** What every process printed, by name (`runner0#2`: the second process of runner 0; `client`). */
  readonly outputs: () => ReadonlyArray<{ readonly name: string; readonly output: string }>
}

export interface ClusterOptions {
  readonly runners: number
  /** Extra environment of every process (failover settings, park window). */
  readonly env: Record<string, string>
}

const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "string" ? Number(v) : 0)

export const startCluster = (options: ClusterOptions): Effect.Effect<Cluster, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const db = yield* testDatabase
    const common = {
      DATABASE_URL: db.url,
      SVC_API_KEYS: `${apiKey}:org_chaos:prod`,
      SVC_MASTER_KEY: Buffer.alloc(32, 7).toString("base64"),
      SVC_ALLOW_PRIVATE_URLS: "1",
      SVC_QUIET: "1",
      SVC_RUNNER_HOST: "127.0.0.1",
      ...options.env
    }
    const scope = yield* Effect.scope
    // One start at a time: a new node id is told apart from the others by appearing while it starts.
    const starting = yield* Semaphore.make(1)
    const nodeIds = Effect.map(
      query(db.url, "SELECT id FROM svc_nodes"),
      (rows) => new Set(rows.map((r) => String(r["id"])))
    )
      .pipe(Effect.catchCause(() => Effect.succeed(new Set<string>())))

    const ports = yield* Effect.forEach(
      Array.from({ length: options.runners }),
      () => Effect.all({ http: freePort, runner: freePort })
    )
    const runners: Array<Runner> = ports.map((p, index) => ({
      index,
      url: `http://127.0.0.1:${p.http}`,
      alive: false,
      nodeId: undefined,
      process: undefined
    }))

    const launchedAll: Array<{ readonly name: string; readonly process: ServiceProcess.Launched }> = []
    const restart = (index: number) =>
      starting.withPermits(1)(Effect.gen(function*() {
        const runner = runners[index]
        const p = ports[index]
        const before = yield* nodeIds
        const launched = yield* ServiceProcess.launch({
          ...common,
          PORT: String(p.http),
          SVC_RUNNER_PORT: String(p.runner)
        }).pipe(
          Scope.provide(scope)
        )
        yield* ServiceProcess.listening(launched)
        const after = yield* nodeIds
        runner.nodeId = [...after].find((id) => !before.has(id))
        launchedAll.push({
          name: `runner${index}#${launchedAll.filter((l) => l.name.startsWith(`runner${index}#`)).length + 1} ${
            runner.nodeId ?? ""
          }`,
          process: launched
        })
        runner.process = launched
        runner.alive = true
      }))

    for (const r of runners) yield* restart(r.index)
    const clientPorts = yield* Effect.all({ http: freePort, runner: freePort })
    const client = yield* ServiceProcess.start({
      ...common,
      PORT: String(clientPorts.http),
      SVC_RUNNER_PORT: String(clientPorts.runner),
      SVC_CLUSTER_ROLE: "client"
    })

    const kill = (index: number) =>
      Effect.gen(function*() {
        const runner = runners[index]
        const launched = runner.process
        const nodeId = runner.nodeId ?? ""
        runner.alive = false
        if (launched !== undefined) yield* ServiceProcess.stop(launched, "SIGKILL")
        const at = Date.now()
        const rows = yield* query(
          db.url,
          `SELECT r.id, (SELECT max(seq) FROM run_events e WHERE e.run_id = r.id) AS seq FROM runs r
           WHERE r.executor = '${nodeId.replace(/'/g, "")}' AND r.status IN ('queued', 'preparing', 'running')`
        )
        return {
          runner: index,
          nodeId,
          at,
          orphans: rows.map((r) => ({ runId: String(r["id"]), lastSeq: num(r["seq"]) }))
        } satisfies Kill
      })

    return {
      databaseUrl: db.url,
      client: client.url,
      runners,
      live: () => [client.url, ...runners.filter((r) => r.alive).map((r) => r.url)],
      kill,
      restart,
      outputs: () => [...launchedAll.map((l) => ({ name: l.name, output: l.process.output() })), {
        name: "client",
        output: client.output()
      }]
    } satisfies Cluster
  })
