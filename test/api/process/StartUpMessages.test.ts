/**
 * What `npm start` (`node src/start.mjs`) says when it cannot start, and when
 * it does: each mistake a newcomer makes is one line on stderr and exit 1,
 * with nothing created (no data directory, no database, no key); a fixed
 * start then prints the development key, keeps it in the data directory and
 * names the API, console and docs URLs; a route without its key is a warning;
 * each request is one access-log line.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, statSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { freePort } from "../../support/TestServer.ts"

const start = (env: Record<string, string>) =>
  ServiceProcess.run("src/start.mjs", [], { HOST: "127.0.0.1", SVC_PREVIEW_PORT: "0", SVC_API_KEYS: "", ...env })

/** The process exited 1 with exactly one line on stderr, matching `line`, and printed nothing else. */
const assertOneLine = (
  result: { readonly code: number | null; readonly stdout: string; readonly stderr: string },
  line: RegExp
) => {
  assert.strictEqual(result.code, 1, result.stderr)
  assert.strictEqual(result.stdout, "")
  const lines = result.stderr.split("\n").filter((l) => l !== "")
  assert.strictEqual(lines.length, 1, result.stderr)
  assert.match(lines[0], line)
}

/** Holds a port, as another process would. */
const takenPort = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(
        Effect.succeed({
          port: typeof address === "object" && address !== null ? address.port : 0,
          close: () => server.close()
        })
      )
    })
  }),
  (held) => Effect.sync(held.close)
)

describe("start-up messages", () => {
  it.live("on Node older than 22.19, one line naming the version to install, exit 1", () =>
    Effect.gen(function*() {
      const result = yield* start({
        // Node reports the version it is; the check reads it before any TypeScript loads.
        NODE_OPTIONS: "--import=data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.20.2'})"
      })
      assertOneLine(
        result,
        /^agent-service: Node\.js 20\.20\.2 is too old: install Node\.js >= 22\.19 \(Node 24 LTS recommended/
      )
    }), 60_000)

  it.live(
    "a bad band route creates nothing and prints no key; the fixed start prints it, keeps it and names the URLs",
    () =>
      Effect.gen(function*() {
        const dataDir = join(yield* ServiceProcess.tempDataDir("svc-startmsg-"), "data")
        const port = String(yield* freePort)
        const bad = yield* start({ SVC_DATA_DIR: dataDir, PORT: port, SVC_BAND_CORE: "gpt-4o" })
        assertOneLine(
          bad,
          /^agent-service: SVC_BAND_CORE='gpt-4o' is not a model route: use scripted, openai:<model> or anthropic:<model> \(for example openai:gpt-4o/
        )
        assert.isFalse(existsSync(dataDir), "nothing is created")

        const launched = yield* ServiceProcess.launchScript("src/start.mjs", [], {
          SVC_DATA_DIR: dataDir,
          PORT: port,
          SVC_API_KEYS: "",
          SVC_BAND_FRONTIER: "openai:gpt-4.1",
          OPENAI_API_KEY: "",
          OPENAI_BASE_URL: "https://api.openai.com/v1"
        })
        const service = yield* ServiceProcess.listening(launched)
        yield* ServiceProcess.waitForOutput(service, (out) => out.includes("Agent service ready"), 120_000)
        const out = service.output()
        const key = /\n\s+(sk_[0-9A-Za-z]+)\n/.exec(out)?.[1] ?? ""
        const keyFile = join(dataDir, "development-key")
        assert.strictEqual(readFileSync(keyFile, "utf8"), `${key}\n`)
        assert.strictEqual(statSync(keyFile).mode & 0o777, 0o600)
        const base = `http://127.0.0.1:${port}`
        for (const line of [`API        ${base}/v1`, `Console    ${base}/console`, `Docs       ${base}/docs`]) {
          assert.include(out, line)
        }
        assert.include(out, `Key        kept in ${keyFile}`)
        assert.include(
          out,
          "SVC_BAND_FRONTIER='openai:gpt-4.1' has no OPENAI_API_KEY: every run on the frontier band will be refused by the provider."
        )

        // One access-log line per request: method, route, status, duration, request id.
        const health = yield* Effect.promise(() => fetch(`${base}/healthz`))
        const requestId = health.headers.get("x-request-id") ?? ""
        yield* ServiceProcess.waitForOutput(service, (o) => o.includes(requestId), 10_000)
        const lines = service.output().split("\n").filter((l) => l.includes(requestId))
        assert.strictEqual(lines.length, 1)
        assert.match(lines[0], new RegExp(`INFO \\(#\\d+\\): GET /healthz 200 [\\d.]+ ms ${requestId}$`))
        yield* ServiceProcess.stop(service)

        // The key is still to be found on the next start.
        const again = yield* ServiceProcess.start({ SVC_DATA_DIR: dataDir, PORT: port, SVC_API_KEYS: "" })
        yield* ServiceProcess.waitForOutput(again, (o) => o.includes("Agent service ready"), 120_000)
        assert.include(again.output(), `Key        kept in ${keyFile}`)
        assert.notInclude(again.output(), key)
        yield* ServiceProcess.stop(again)
      }).pipe(Effect.scoped),
    400_000
  )

  it.live("a taken port: one line naming PORT, exit 1, nothing created", () =>
    Effect.gen(function*() {
      const held = yield* takenPort
      const dataDir = join(yield* ServiceProcess.tempDataDir("svc-startmsg-"), "data")
      const result = yield* start({ SVC_DATA_DIR: dataDir, PORT: String(held.port) })
      assertOneLine(
        result,
        new RegExp(
          `^agent-service: PORT=${held.port}: 127\\.0\\.0\\.1:${held.port} is already in use \\(another agent-service\\?\\)\\. Stop that process or set PORT to a free port\\.$`
        )
      )
      assert.isFalse(existsSync(dataDir))
    }).pipe(Effect.scoped), 60_000)

  it.live("an unreachable database: one line naming DATABASE_URL's host, exit 1", () =>
    Effect.gen(function*() {
      const nobody = yield* freePort
      const result = yield* start({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${nobody}/svc`,
        SVC_MASTER_KEY: Buffer.alloc(32, 5).toString("base64"),
        PORT: String(yield* freePort),
        SVC_RUNNER_PORT: String(yield* freePort)
      })
      assertOneLine(
        result,
        new RegExp(
          `^agent-service: cannot connect to the database at 127\\.0\\.0\\.1:${nobody} \\(DATABASE_URL\\): connection refused \\(is PostgreSQL running there\\?\\)\\.$`
        )
      )
    }), 60_000)

  it.live("a setting that does not parse: one line naming it, exit 1", () =>
    Effect.gen(function*() {
      const dataDir = join(yield* ServiceProcess.tempDataDir("svc-startmsg-"), "data")
      const result = yield* start({ SVC_DATA_DIR: dataDir, PORT: "eighty" })
      assertOneLine(result, /^agent-service: PORT: Expected a string representing a finite number$/)
      assert.isFalse(existsSync(dataDir))
    }).pipe(Effect.scoped), 60_000)
})
