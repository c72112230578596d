/**
 * The secret-leak scan (issue 15): the service as a real process (JSON logs,
 * the access log on) on its own database and workspace root; secrets with
 * recognizable values used through every binding in turns that fail every
 * way (LeakScenarios); then every API response (status line, headers, body,
 * every stream as sent and as replayed), the process's whole output, and
 * every column of every table are searched for each value in every form it
 * could take (SecretScan): there must be none.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HookServer } from "../../support/HookServer.ts"
import { echoApi, echoMcp } from "../../support/LeakyUpstreams.ts"
import { databaseSources, scan, type Source } from "../../support/SecretScan.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import * as TestServer from "../../support/TestServer.ts"
import {
  httpConnectionTurns,
  readEverything,
  resultHandler,
  secretValues,
  toolServerTurns,
  workspaceTurns
} from "./LeakScenarios.ts"

const workspaceRoot = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "svc-leaks-ws-"))
    chmodSync(root, 0o711) // the workspaces' uids pass through it
    return root
  }),
  (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

/** A TestApi on the process that keeps every reply, as a source to scan. */
const recording = (url: string) => {
  const base = TestServer.client(url)
  const replies: Array<Source> = []
  const api = TestServer.TestApi.of({
    url,
    request: (method, path, options) =>
      Effect.tap(base.request(method, path, options), (reply) =>
        Effect.sync(() => {
          const headers = [...reply.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n")
          replies.push({ where: `${method} ${path} → ${reply.status}`, text: `${headers}\n\n${reply.text}` })
        }))
  })
  return { api, replies }
}

describe("secret-leak scan", () => {
  it.live(
    "no secret value, in any form, in any response, stream, log line or stored column",
    () =>
      Effect.gen(function*() {
        const values = secretValues()
        const db = yield* testDatabase
        const mcp = yield* echoMcp(values.mcp)
        const api = yield* echoApi
        const deadUrl = `http://127.0.0.1:${yield* TestServer.freePort}/mcp`
        const service = yield* ServiceProcess.start({
          DATABASE_URL: db.url,
          SVC_API_KEYS: `${TestServer.Keys.a}:org_acme:prod`,
          SVC_MASTER_KEY: TestServer.testMasterKey,
          SVC_ALLOW_PRIVATE_URLS: "1",
          SVC_LOG_FORMAT: "json",
          SVC_WORKSPACE_ROOT: yield* workspaceRoot,
          SVC_RUNNER_HOST: "127.0.0.1",
          PORT: String(yield* TestServer.freePort),
          SVC_RUNNER_PORT: String(yield* TestServer.freePort)
        })
        const { api: client, replies } = recording(service.url)

        yield* Effect.gen(function*() {
          yield* toolServerTurns(values, mcp, deadUrl)
          yield* httpConnectionTurns(values, api)
          yield* workspaceTurns(values)
          yield* resultHandler(values)
          yield* readEverything
        }).pipe(Effect.provideService(TestServer.TestApi, client), Effect.provide(HookServer.layer))
        yield* ServiceProcess.stop(service)

        const sources: Array<Source> = [
          ...replies,
          { where: "the service's output (stdout and stderr)", text: service.output() },
          ...(yield* databaseSources(db.url))
        ]
        // The scan reads what it should: the turns happened, and the log has lines.
        assert.isAbove(replies.length, 100)
        assert.include(service.output(), "\"message\":\"Sent HTTP response\"")
        const hits = scan(values, sources)
        assert.deepStrictEqual(hits.map((h) => `${h.secret} (${h.form}) in ${h.where}: …${h.excerpt}…`), [])
      }).pipe(Effect.scoped),
    { timeout: 240_000 }
  )
})
