/**
 * Limits on the real sandbox: a fork bomb, a memory hog, a CPU spinner, a
 * single huge file, a many-files disk filler and a command past its wall time
 * each end that command with a result naming the limit (or the program's own
 * allocation failure, for memory); no process of the workspace is left
 * behind, the next command runs normally, and the test process is unharmed.
 * Output beyond the cap is dropped and marked truncated.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { Sandbox, type Workspace } from "../../../src/workspace/Sandbox.ts"
import { sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

/** Host processes running as the workspace's uid (none once a command ended). */
const leftovers = (ws: Workspace) =>
  spawnSync("ps", ["-o", "pid=,stat=,etimes=,cmd=", "-u", String(ws.uid)], { encoding: "utf8" }).stdout.trim()

const healthy = (ws: Workspace) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox
    assert.strictEqual(leftovers(ws), "")
    const next = yield* sandbox.exec(ws, { command: "echo still fine" })
    assert.deepStrictEqual(next, { exitCode: 0, stdout: "still fine\n", stderr: "", truncated: false })
  })

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const value = yield* effect
    return { value, ms: performance.now() - start }
  })

describe("sandbox limits", () => {
  // Live services: the commands are real processes with real wall time.
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect("a command past its wall time is killed with everything it started", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_wall", testLimits)
        const { value, ms } = yield* elapsed(
          sandbox.exec(ws, { command: "sleep 30 & echo started; sleep 30", timeoutMs: 300 })
        )
        assert.strictEqual(value.stdout, "started\n")
        assert.deepStrictEqual(value.limit, {
          kind: "wall_time",
          message: "the command ran longer than its wall time of 300 ms and was killed"
        })
        assert.isBelow(ms, 5_000)
        yield* healthy(ws)
      }))

    it.effect("a fork bomb meets the process limit and is ended by its wall time", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_fork", testLimits)
        const result = yield* sandbox.exec(ws, { command: "bomb() { bomb & bomb; }; bomb", timeoutMs: 2_000 })
        assert.match(result.stderr, /fork: (retry: )?Resource temporarily unavailable/)
        assert.strictEqual(result.limit?.kind, "wall_time")
        yield* healthy(ws)
      }))

    it.effect("a memory hog cannot allocate past the memory limit", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_mem", testLimits)
        const result = yield* sandbox.exec(ws, { command: "awk 'BEGIN { s = \"x\"; while (1) s = s s }'" })
        assert.notStrictEqual(result.exitCode, 0)
        assert.match(result.stderr, /cannot allocate|out of memory/i)
        yield* healthy(ws)
      }))

    it.effect("a CPU spinner is killed at its CPU time", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_cpu", {
          ...testLimits,
          cpuSeconds: 1,
          defaultTimeoutMs: 30_000,
          maxTimeoutMs: 30_000
        })
        const result = yield* sandbox.exec(ws, { command: "while :; do :; done" })
        assert.deepStrictEqual(result.limit, {
          kind: "cpu_time",
          message: "the command used more than 1 s of CPU time and was killed"
        })
        yield* healthy(ws)
      }))

    it.effect("one file larger than the disk limit stops at the limit", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_bigfile", testLimits)
        const result = yield* sandbox.exec(ws, { command: "head -c 50M /dev/zero > big" })
        assert.strictEqual(result.limit?.kind, "file_size")
        assert.isAtMost(yield* sandbox.diskUsage(ws), testLimits.diskBytes + 64 * 1024)
        yield* healthy(ws)
      }))

    it.effect("a disk filler writing many files is stopped, and deleting files makes room again", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_filler", testLimits)
        const result = yield* sandbox.exec(ws, {
          command: "i=0; while :; do head -c 1M /dev/zero > f$i; i=$((i+1)); done"
        })
        assert.strictEqual(result.limit?.kind, "disk")
        assert.match(
          result.limit?.message ?? "",
          /over its disk limit of 8388608 bytes; the command was stopped\. Delete files to make room\./
        )
        const usage = yield* sandbox.diskUsage(ws)
        assert.isAbove(usage, testLimits.diskBytes)
        assert.isBelow(usage, 1024 * 1024 * 1024) // bounded by what the disk takes in one check interval
        const cleaned = yield* sandbox.exec(ws, { command: "rm -f f*" })
        assert.deepStrictEqual(cleaned, { exitCode: 0, stdout: "", stderr: "", truncated: false })
        yield* healthy(ws)
      }))

    it.effect("tmpfs /tmp is capped too", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_tmp", testLimits)
        const result = yield* sandbox.exec(ws, { command: "head -c 16M /dev/zero > /tmp/fill" })
        assert.match(result.stderr, /No space left on device/)
      }))

    it.effect("output past the cap is dropped and marked truncated; the command still runs to its end", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_out", { ...testLimits, outputBytes: 1_000 })
        const result = yield* sandbox.exec(ws, {
          command: "head -c 200000 /dev/zero | tr '\\0' x; echo done >&2; exit 3"
        })
        assert.strictEqual(result.stdout, "x".repeat(1_000))
        assert.strictEqual(result.stderr, "done\n")
        assert.strictEqual(result.exitCode, 3)
        assert.isTrue(result.truncated)
      }))
  })
})
