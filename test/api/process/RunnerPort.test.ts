/**
 * The cluster runner port (PostgreSQL): it binds SVC_RUNNER_HOST, not every
 * interface; with SVC_RUNNER_TLS_* it speaks mutual TLS: two nodes with the
 * cluster's certificates run a turn across it, and a connection without a
 * certificate, or with one another CA signed, is refused at the handshake.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { connect as netConnect } from "node:net"
import { networkInterfaces } from "node:os"
import { connect as tlsConnect, type ConnectionOptions } from "node:tls"
import { Agent } from "../../../domain/Agent.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { introduction } from "../../../src/model/ScriptedModel.ts"
import { runnerCerts } from "../../support/RunnerCerts.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"
import { parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson
const key = "sk_runner_port"

/** Whether a TCP connection to host:port is accepted. */
const accepts = (host: string, port: number) =>
  Effect.callback<boolean>((resume) => {
    const socket = netConnect({ host, port }, () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.on("error", () => resume(Effect.succeed(false)))
    return Effect.sync(() => socket.destroy())
  })

/**
 * A TLS handshake with the runner port with these options. TLS 1.2, where the server checks the
 * client's certificate within the handshake: a completed handshake means it was accepted.
 */
const handshake = (port: number, options: ConnectionOptions) =>
  Effect.callback<"accepted" | "refused">((resume) => {
    const socket = tlsConnect({
      host: "127.0.0.1",
      port,
      maxVersion: "TLSv1.2",
      checkServerIdentity: () => undefined,
      ...options
    })
    socket.on("secureConnect", () => {
      socket.destroy()
      resume(Effect.succeed("accepted"))
    })
    socket.on("error", () => resume(Effect.succeed("refused")))
    socket.on("close", () => resume(Effect.succeed("refused")))
    return Effect.sync(() => socket.destroy())
  })

const common = (db: { readonly url: string }) => ({
  DATABASE_URL: db.url,
  SVC_API_KEYS: `${key}:org_runner:prod`,
  SVC_MASTER_KEY: Buffer.alloc(32, 4).toString("base64"),
  SVC_QUIET: "1",
  SVC_RUNNER_HOST: "127.0.0.1"
})

describe("runner port", () => {
  it.live("binds SVC_RUNNER_HOST (127.0.0.1), not every interface", () =>
    Effect.gen(function*() {
      const db = yield* testDatabase
      const runnerPort = yield* freePort
      const a = yield* ServiceProcess.start({
        ...common(db),
        PORT: String(yield* freePort),
        SVC_RUNNER_PORT: String(runnerPort)
      })
      assert.match(a.output(), new RegExp(`Listening on: 127\\.0\\.0\\.1:${runnerPort} .*service: 'Runner'`))
      assert.isTrue(yield* accepts("127.0.0.1", runnerPort))
      const external = Object.values(networkInterfaces()).flat().find((i) =>
        i !== undefined && !i.internal && i.family === "IPv4"
      )
      if (external !== undefined) assert.isFalse(yield* accepts(external.address, runnerPort))
      yield* ServiceProcess.stop(a)
    }).pipe(Effect.scoped), 120_000)

  it.live(
    "mutual TLS: two nodes with the cluster's certificates run a turn; no certificate, or a stranger's, is refused",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const certs = yield* runnerCerts
        const tls = {
          SVC_RUNNER_TLS_CERT: certs.cluster.cert,
          SVC_RUNNER_TLS_KEY: certs.cluster.key,
          SVC_RUNNER_TLS_CA: certs.cluster.ca
        }
        const runnerPort = yield* freePort
        // A hosts the entities; B (client role) sends every message to A over TLS.
        const a = yield* ServiceProcess.start({
          ...common(db),
          ...tls,
          PORT: String(yield* freePort),
          SVC_RUNNER_PORT: String(runnerPort)
        })
        const b = yield* ServiceProcess.start({
          ...common(db),
          ...tls,
          PORT: String(yield* freePort),
          SVC_RUNNER_PORT: String(yield* freePort),
          SVC_CLUSTER_ROLE: "client"
        })
        const post = (path: string, body: unknown) => ServiceProcess.request(b.url, "POST", path, key, body)
        const agent = decode(Agent, (yield* post("/v1/agents", {})).text)
        const thread = decode(ThreadCreated, (yield* post("/v1/threads", { agentId: agent.id })).text)
        const turn = yield* post(`/v1/threads/${thread.id}/messages`, { input: "across TLS" })
        const parsed = yield* Effect.orDie(parseWithAi(turn.text))
        assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
        assert.deepStrictEqual(parsed.message?.parts.filter((p) => p.type === "text").map((p) => p.text), [
          `${introduction}\n\nEcho: across TLS`
        ])

        const ca = readFileSync(certs.cluster.ca)
        assert.strictEqual(
          yield* handshake(runnerPort, {
            ca,
            cert: readFileSync(certs.cluster.cert),
            key: readFileSync(certs.cluster.key)
          }),
          "accepted"
        )
        assert.strictEqual(yield* handshake(runnerPort, { ca }), "refused")
        assert.strictEqual(
          yield* handshake(runnerPort, {
            ca,
            cert: readFileSync(certs.stranger.cert),
            key: readFileSync(certs.stranger.key)
          }),
          "refused"
        )
        yield* ServiceProcess.stop(b)
        yield* ServiceProcess.stop(a)
      }).pipe(Effect.scoped),
    180_000
  )
})
