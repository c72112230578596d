/**
 * The CLI as people run it: installed as the `agent-service` bin (a link to
 * package.json's `bin` entry, as `npm link` makes) and from a checkout with
 * `npm run -s cli --`. Each says the command it was run with in its hints;
 * no service is needed for the lines checked here.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "../../..")
const bin = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> }).bin

/** `command args` in the checkout, without an API key, Node 24 first on PATH. */
const run = (command: string, args: ReadonlyArray<string>, path: string) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: path, SVC_URL: "http://127.0.0.1:9" }
    delete env["SVC_API_KEY"]
    delete env["npm_lifecycle_event"]
    const child = spawn(command, args, { cwd: root, env })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.once("exit", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

const noKey = (cli: string) =>
  "error: no API key: pass --api-key or set SVC_API_KEY (the development key the service printed at its first " +
  `start, a key of SVC_API_KEYS, or one an admin made with \`${cli} keys create\`)\n`

describe("the agent-service command", () => {
  it.effect("installed as the bin: runs on Node >= 22.19 and names itself agent-service", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(bin, { "agent-service": "./src/cli.mjs" })
      const dir = mkdtempSync(join(tmpdir(), "svc-bin-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      symlinkSync(join(root, bin["agent-service"]), join(dir, "agent-service"))
      const path = [dir, dirname(process.execPath), process.env["PATH"] ?? ""].join(delimiter)
      const version = yield* run("agent-service", ["--version"], path)
      assert.deepStrictEqual([version.code, version.stdout.trim()], [0, "agent-service v0.1.0"])
      const listed = yield* run("agent-service", ["agents", "list"], path)
      assert.deepStrictEqual([listed.code, listed.stdout, listed.stderr], [2, "", noKey("agent-service")])
    }).pipe(Effect.scoped), 60_000)

  it.effect("npm run -s cli -- names itself so", () =>
    Effect.gen(function*() {
      const path = [dirname(process.execPath), process.env["PATH"] ?? ""].join(delimiter)
      const listed = yield* run("npm", ["run", "-s", "cli", "--", "agents", "list"], path)
      assert.deepStrictEqual([listed.code, listed.stdout, listed.stderr], [2, "", noKey("npm run -s cli --")])
    }), 60_000)
})
