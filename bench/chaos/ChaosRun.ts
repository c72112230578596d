/**
 * One chaos run, end to end: the MCP server, the cluster, an agent, then the
 * mixed load (sessions started by `concurrency` drivers until `runs` were
 * started or `durationMs` passed) while runners are killed and restarted;
 * then every runner is up again, every session's stream is followed to its
 * end (or `settleMs` passes), and what the run produced is returned for the
 * assertions and the report.
 */
import { Effect, Schema, type Scope } from "effect"
import { type Api, makeApi } from "./Api.ts"
import { type Cluster, startCluster } from "./Cluster.ts"
import { type Chaos, unleash } from "./Killer.ts"
import { type Scenario, scenarios, type Session, session } from "./Load.ts"
import { chaosToolServer, type ToolCall } from "./ToolServer.ts"

export interface ChaosOptions {
  readonly runners: number
  readonly runs: number
  readonly concurrency: number
  readonly durationMs: number
  readonly killEveryMs: number
  readonly restartAfterMs: number
  readonly maxKills: number
  /** How long streams may take to end once the load stopped. */
  readonly settleMs: number
  /** The park window (SVC_MAX_PARK_MS) the `expire` scenario waits out. */
  readonly maxParkMs: number
  /** Extra environment of every process. */
  readonly env: Record<string, string>
}

export interface ChaosResult {
  readonly options: ChaosOptions
  readonly cluster: Cluster
  readonly api: Api
  readonly sessions: ReadonlyArray<Session>
  /** Sessions the driver could not carry out (a start refused, a request that kept failing). */
  readonly driverFailures: ReadonlyArray<string>
  readonly chaos: Chaos
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly startedAt: number
  readonly endedAt: number
}

const Created = Schema.Struct({ id: Schema.String })
const decodeCreated = (text: string) =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(Created))(text).pipe(Effect.orDie)

/** The scenario of the i-th session: a fixed mix, interleaved. */
const mix: ReadonlyArray<Scenario> = [
  "tools",
  "text",
  "approve",
  "followup",
  "tools",
  "cancel",
  "text",
  "expire",
  "tools",
  "approve",
  "followup",
  "text"
]
export const scenarioOf = (i: number): Scenario => mix[i % mix.length] ?? scenarios[0]

export const runChaos = (options: ChaosOptions): Effect.Effect<ChaosResult, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const tools = yield* chaosToolServer
    const cluster = yield* startCluster({
      runners: options.runners,
      env: { SVC_MAX_PARK_MS: String(options.maxParkMs), ...options.env }
    })
    const api = makeApi(cluster.live)
    const server = yield* decodeCreated(
      (yield* api.send(
        "POST",
        "/v1/tool-servers",
        {
          name: "chaos",
          transport: "http",
          url: tools.url,
          approval: "always",
          gatedTools: ["gated"]
        },
        {},
        cluster.client
      )).text
    )
    const agent = yield* decodeCreated(
      (yield* api.send(
        "POST",
        "/v1/agents",
        { capabilities: { mcp: { toolServerIds: [server.id] } } },
        {},
        cluster.client
      )).text
    )

    const startedAt = Date.now()
    const loadEnds = startedAt + options.durationMs
    const deadline = loadEnds + options.settleMs
    const chaos = yield* unleash(cluster, options)
    const sessions: Array<Session> = []
    const driverFailures: Array<string> = []
    let next = 0
    const driver = Effect.gen(function*() {
      while (next < options.runs && Date.now() < loadEnds) {
        const i = next++
        const name = `s${i}`
        const outcome = yield* Effect.result(
          session(cluster, api, { agentId: agent.id, deadline }, scenarioOf(i), name)
        )
        if (outcome._tag === "Success") sessions.push(...outcome.success)
        else driverFailures.push(`${name} (${scenarioOf(i)}): ${outcome.failure.message}`)
      }
    })
    yield* Effect.forEach(Array.from({ length: options.concurrency }), () => driver, {
      concurrency: "unbounded",
      discard: true
    })
    yield* chaos.stop
    return {
      options,
      cluster,
      api,
      sessions,
      driverFailures,
      chaos,
      toolCalls: tools.calls(),
      startedAt,
      endedAt: Date.now()
    } satisfies ChaosResult
  })
