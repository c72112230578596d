/**
 * Reading a workspace's directory on the host (WorkspaceReader), on a real
 * directory: pages of entries by name, links listed and never followed
 * (a link to a host file, a link to a directory out of the workspace, a link
 * inside it), the kinds refused, and a download that gives exactly the size
 * it announced even when the file grew after.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { appendFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as WorkspaceReader from "../../../src/workspace/WorkspaceReader.ts"

/** A workspace directory with a host file beside it, and links to it and to its directory. */
const fixture = () => {
  const base = mkdtempSync(join(tmpdir(), "svc-reader-"))
  const root = join(base, "ws")
  writeFileSync(join(base, "host-secret.txt"), "host secret\n")
  mkdirSync(join(root, "docs", "deep"), { recursive: true })
  writeFileSync(join(root, "docs", "deep", "a.txt"), "alpha\n")
  for (const name of ["b.txt", "c.txt", "d.txt"]) writeFileSync(join(root, name), name)
  symlinkSync(join(base, "host-secret.txt"), join(root, "leak"))
  symlinkSync(base, join(root, "up"))
  symlinkSync("docs", join(root, "docs-link"))
  return root
}

const reasonOf = <A>(effect: Effect.Effect<A, WorkspaceReader.ReadRefused>) =>
  Effect.map(Effect.flip(effect), (e) => `${e.reason} ${e.at}`)

describe("WorkspaceReader", () => {
  it.effect("lists a page after a name, links as links", () =>
    Effect.gen(function*() {
      const root = fixture()
      const first = yield* WorkspaceReader.list(root, [], { after: undefined, limit: 3 })
      assert.deepStrictEqual(first.entries.map((e) => `${e.type} ${e.name}`), [
        "file b.txt",
        "file c.txt",
        "file d.txt"
      ])
      assert.isTrue(first.hasMore)
      const second = yield* WorkspaceReader.list(root, [], { after: "d.txt", limit: 3 })
      assert.deepStrictEqual(second.entries.map((e) => `${e.type} ${e.name}`), [
        "directory docs",
        "symlink docs-link",
        "symlink leak"
      ])
      assert.isTrue(second.hasMore)
      const last = yield* WorkspaceReader.list(root, [], { after: "leak", limit: 3 })
      assert.deepStrictEqual(last.entries.map((e) => `${e.type} ${e.name}`), ["symlink up"])
      assert.isFalse(last.hasMore)
    }))

  it.effect("never follows a link, wherever it is in the path; refuses the wrong kinds", () =>
    Effect.gen(function*() {
      const root = fixture()
      assert.strictEqual(yield* reasonOf(WorkspaceReader.inspect(root, ["leak"])), "symlink leak")
      assert.strictEqual(yield* reasonOf(WorkspaceReader.inspect(root, ["up", "host-secret.txt"])), "symlink up")
      assert.strictEqual(
        yield* reasonOf(WorkspaceReader.inspect(root, ["docs-link", "deep", "a.txt"])),
        "symlink docs-link"
      )
      assert.strictEqual(
        yield* reasonOf(WorkspaceReader.list(root, ["up"], { after: undefined, limit: 5 })),
        "symlink up"
      )
      assert.strictEqual(yield* reasonOf(WorkspaceReader.inspect(root, ["docs"])), "not_file docs")
      assert.strictEqual(
        yield* reasonOf(WorkspaceReader.list(root, ["b.txt"], { after: undefined, limit: 5 })),
        "not_directory b.txt"
      )
      assert.strictEqual(
        yield* reasonOf(WorkspaceReader.inspect(root, ["docs", "nope.txt"])),
        "not_found docs/nope.txt"
      )
      // The root itself may not be a link either (the service made it; a link there is not its directory).
      assert.strictEqual(yield* reasonOf(WorkspaceReader.inspect(join(root, "up"), ["ws", "b.txt"])), "symlink .")
    }))

  it.effect("reads exactly the size inspect announced, even after the file grew", () =>
    Effect.gen(function*() {
      const root = fixture()
      const path = ["docs", "deep", "a.txt"]
      const head = yield* WorkspaceReader.inspect(root, path)
      assert.strictEqual(head.size, 6)
      assert.strictEqual(new TextDecoder().decode(head.head), "alpha\n")
      appendFileSync(join(root, ...path), "appended later\n")
      const chunks = yield* Stream.runCollect(WorkspaceReader.read(root, path, head.size))
      assert.strictEqual(Buffer.concat([...chunks]).toString("utf8"), "alpha\n")
    }))
})
