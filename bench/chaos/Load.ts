/**
 * The chaos run's mixed load. Each session has a thread of its own and one
 * scenario: a text turn, a turn of slow MCP tool steps, an approval resolved
 * after a delay, an approval left to expire, a cancel after a delay, or a
 * follow-up sent while the run works. Runs start through the client node
 * (never killed, so an Idempotency-Key it holds pending always completes);
 * streams are followed, approvals resolved and runs cancelled through any
 * node that is up. A session records what the assertions need.
 */
import { Effect, Schema } from "effect"
import type { Api } from "./Api.ts"
import type { Cluster } from "./Cluster.ts"
import { follow, type Followed, type Received } from "./Follower.ts"

export type Scenario = "text" | "tools" | "approve" | "expire" | "cancel" | "followup"
export const scenarios: ReadonlyArray<Scenario> = ["text", "tools", "approve", "expire", "cancel", "followup"]

export interface Session {
  readonly scenario: Scenario
  readonly runId: string
  /** The tool-call keys the turn's script uses, in order. */
  readonly keys: ReadonlyArray<string>
  readonly followed: Followed
  /** The follow-up the thread held for the run (followup), if it was held. */
  readonly followupId: string | undefined
  /** Whether the driver cancelled the run (cancel) or resolved its approval (approve). */
  readonly acted: boolean
  /** The run as the API reports it at the end. */
  readonly status: string
  readonly terminalReason: string | null
  readonly errors: ReadonlyArray<string>
}

export interface LoadOptions {
  /** The agents the load uses. */
  readonly agentId: string
  /** When the session's follower gives up (epoch ms). */
  readonly deadline: number
}

const Receipt = Schema.Struct({ runId: Schema.String })
const Created = Schema.Struct({ id: Schema.String })
const Busy = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, details: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)) })
})
const RunView = Schema.Struct({ status: Schema.String, terminalReason: Schema.NullOr(Schema.String) })
const decodeRequested = Schema.decodeUnknownOption(Schema.fromJsonString(
  Schema.Struct({
    type: Schema.Literal("data-svc-input-requested"),
    data: Schema.Struct({ interactionId: Schema.String })
  })
))

const decode = <A>(schema: Schema.Decoder<A>, text: string) =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(text).pipe(Effect.orDie)

const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low))

const work = (tool: "work" | "gated", key: string, ms: number) =>
  `/tool mcp__chaos__${tool} ${JSON.stringify({ key, ms })}`

/** The turn's script (the scripted model reads it) and the keys of its tool calls. */
const script = (
  scenario: Scenario,
  session: string
): { readonly input: string; readonly keys: ReadonlyArray<string> } => {
  const steps = (n: number, low: number, high: number) =>
    Array.from({ length: n }, (_, i) => `${session}-${i + 1}`).map((key) => ({ key, ms: between(low, high) }))
  switch (scenario) {
    case "text":
      return { input: `/text The chaos run says hello from ${session}, word by word.`, keys: [] }
    case "tools":
    case "followup": {
      const s = steps(scenario === "tools" ? 3 : 2, 300, 1200)
      return {
        input: [...s.map((x) => work("work", x.key, x.ms)), `/text ${scenario} done`].join("\n"),
        keys: s.map((x) => x.key)
      }
    }
    case "cancel": {
      const s = steps(3, 1000, 2000)
      return {
        input: [...s.map((x) => work("work", x.key, x.ms)), "/text never reached"].join("\n"),
        keys: s.map((x) => x.key)
      }
    }
    case "approve":
    case "expire":
      return { input: `${work("gated", `${session}-1`, 200)}\n/text ${scenario} done`, keys: [`${session}-1`] }
  }
}

/** One session: its thread, its run (two, when the follow-up came after the first ended), the scenario's actions, the streams followed to their end. */
export const session = (
  cluster: Cluster,
  api: Api,
  options: LoadOptions,
  scenario: Scenario,
  name: string
): Effect.Effect<ReadonlyArray<Session>, Error> =>
  Effect.gen(function*() {
    const direct = (method: string, path: string, body: unknown, headers: Record<string, string>) =>
      api.send(method, path, body, headers, cluster.client)
    const thread = yield* decode(
      Created,
      (yield* direct("POST", "/v1/threads", { agentId: options.agentId }, { "idempotency-key": `${name}-thread` })).text
    )
    const { input, keys } = script(scenario, name)
    const started = yield* direct("POST", `/v1/threads/${thread.id}/messages`, { input }, {
      accept: "application/json",
      "idempotency-key": `${name}-run`
    })
    if (started.status !== 201 && started.status !== 200) {
      return yield* Effect.fail(new Error(`run start ${started.status}: ${started.text}`))
    }
    const { runId } = yield* decode(Receipt, started.text)
    const nodes = cluster.live()
    const follower = yield* follow(
      runId,
      cluster.live,
      nodes[Math.floor(Math.random() * nodes.length)] ?? cluster.client,
      options.deadline
    )
    const errors: Array<string> = []
    let followupId: string | undefined
    let acted = false
    let extra: { readonly runId: string; readonly followed: Effect.Effect<Followed> } | undefined

    if (scenario === "approve") {
      const requested = yield* Effect.callback<string>((resume) => {
        const look = (f: Received) => {
          const chunk = decodeRequested(f.data)
          if (chunk._tag === "Some") resume(Effect.succeed(chunk.value.data.interactionId))
        }
        follower.received().forEach(look)
        follower.onFrame(look)
      }).pipe(Effect.timeoutOption(Math.max(1, options.deadline - Date.now())))
      if (requested._tag === "Some") {
        yield* Effect.sleep(between(300, 1500))
        const id = requested.value
        const resolved = yield* api.send("POST", `/v1/interactions/${id}/resolve`, {
          inputResponses: [{ requestId: id, optionId: "approve" }]
        })
        if (resolved.status === 200) acted = true
        else errors.push(`resolve ${resolved.status}: ${resolved.text}`)
      } else errors.push("no approval request arrived")
    }
    if (scenario === "cancel") {
      yield* Effect.sleep(between(400, 2500))
      const cancelled = yield* api.send("POST", `/v1/runs/${runId}/cancel`)
      if (cancelled.status === 200) acted = true
      else errors.push(`cancel ${cancelled.status}: ${cancelled.text}`)
    }
    if (scenario === "followup") {
      yield* Effect.sleep(between(100, 400))
      const held = yield* direct("POST", `/v1/threads/${thread.id}/messages`, { input: "And one more thing." }, {
        accept: "application/json",
        "idempotency-key": `${name}-followup`
      })
      if (held.status === 409) {
        const busy = yield* decode(Busy, held.text)
        const id = busy.error.details?.["followup_id"]
        if (typeof id === "string") followupId = id
        else errors.push(`follow-up not held: ${held.text}`)
      } else if (held.status === 200) {
        // The run had ended by the time the message got through (its first try met a dying runner): a run of its own.
        const own = yield* decode(Receipt, held.text)
        const next = yield* follow(own.runId, cluster.live, cluster.client, options.deadline)
        extra = { runId: own.runId, followed: next.done }
      } else errors.push(`follow-up ${held.status}: ${held.text}`)
    }
    const finished = (id: string, followed: Followed, s: Scenario, keys: ReadonlyArray<string>) =>
      Effect.map(api.send("GET", `/v1/runs/${id}`), (reply) => reply.text).pipe(
        Effect.flatMap((text) => decode(RunView, text)),
        Effect.map((view): Session => ({
          scenario: s,
          runId: id,
          keys,
          followed,
          followupId,
          acted,
          status: view.status,
          terminalReason: view.terminalReason,
          errors
        }))
      )
    const main = yield* finished(runId, yield* follower.done, scenario, keys)
    if (extra === undefined) return [main]
    // The first run still shows the scenario's own checks, but no follow-up to look for; the second is a text turn.
    return [
      { ...main, scenario: "tools" as const, followupId: undefined },
      yield* finished(extra.runId, yield* extra.followed, "text", [])
    ]
  })
