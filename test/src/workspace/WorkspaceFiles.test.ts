/**
 * Writes of the workspace's file operations, on the real sandbox: a write
 * replaces its file at once (a new file renamed over the old), so a reader
 * that opened the file before, in another command (another run of the tree
 * sharing the workspace), reads the old content whole, never the new one
 * half-written; an existing file keeps its mode, a new one gets the usual
 * 644, and no temporary file is left behind.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Sandbox } from "../../../src/workspace/Sandbox.ts"
import * as Files from "../../../src/workspace/WorkspaceFiles.ts"
import { sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

/** Waits (inside the sandbox, at most 10 s) until `file` exists. */
const waitFor = (file: string) => `for i in $(seq 500); do [ -e ${file} ] && break; sleep 0.02; done`

describe("workspace files", () => {
  // Live services: real processes with real wall time.
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect("a write replaces the file at once: a reader that opened it before reads the old content whole", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_atomic_write", testLimits)
        yield* Files.writeFile(sandbox, ws, { path: "data.txt", content: "the old content\n" })
        const reader = yield* Effect.forkChild(sandbox.exec(ws, {
          command: `exec 3< data.txt; : > opened; ${waitFor("written")}; cat <&3`
        }))
        yield* sandbox.exec(ws, { command: waitFor("opened") })
        yield* Files.writeFile(sandbox, ws, { path: "data.txt", content: "the new content, longer than the old\n" })
        yield* Files.writeFile(sandbox, ws, { path: "written", content: "" })
        assert.deepStrictEqual(yield* Fiber.join(reader), {
          exitCode: 0,
          stdout: "the old content\n",
          stderr: "",
          truncated: false
        })
        const after = yield* Files.readFile(sandbox, ws, { path: "data.txt" })
        assert.strictEqual(after.content, "the new content, longer than the old\n")
        // Nothing but the files written: no temporary file left beside them.
        const listed = yield* sandbox.exec(ws, { command: "ls -A" })
        assert.strictEqual(listed.stdout, "data.txt\nopened\nwritten\n")
      }))

    it.effect("an existing file keeps its mode; a new one is 644; a directory is refused", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_write_modes", testLimits)
        yield* sandbox.exec(ws, { command: "printf 'echo one\\n' > run.sh && chmod 750 run.sh && mkdir dir" })
        yield* Files.writeFile(sandbox, ws, { path: "run.sh", content: "echo two\n" })
        yield* Files.writeFile(sandbox, ws, { path: "sub/new.txt", content: "new\n" })
        const modes = yield* sandbox.exec(ws, { command: "stat -c '%a %n' run.sh sub/new.txt && ./run.sh" })
        assert.strictEqual(modes.stdout, "750 run.sh\n644 sub/new.txt\ntwo\n")
        const refused = yield* Effect.flip(Files.writeFile(sandbox, ws, { path: "dir", content: "x" }))
        assert.strictEqual(refused.message, "is a directory: dir")
      }))
  })
})
