/**
 * Workspace archives on the real machine: tar runs as the workspace's uid, so
 * a symlink the sandbox planted toward a root-only host file is archived as a
 * link (the file's content never enters the snapshot) and restored as a link;
 * files, directories and modes come back; an archive over the size cap is
 * refused; bytes that are not an archive fail to unpack; the fingerprint
 * changes with the tree and only then.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { lstatSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { Sandbox } from "../../../src/workspace/Sandbox.ts"
import * as WorkspaceArchive from "../../../src/workspace/WorkspaceArchive.ts"
import { sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

const secret = "root only content of the host"

describe("workspace archives", () => {
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect("a planted symlink is archived as a link; files, directories and modes are restored as the workspace's uid", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const source = yield* sandbox.open("ws_archive_source", testLimits)
        // A root-only file outside the workspace, and a link to it planted inside.
        yield* Effect.sync(() => writeFileSync(join(source.dir, "..", "host-secret.txt"), secret, { mode: 0o600 }))
        yield* sandbox.exec(source, {
          command:
            "mkdir -p src/deep && echo 'hello' > src/deep/a.txt && printf '#!/bin/sh\\n' > run.sh && chmod 750 run.sh && ln -s ../host-secret.txt /workspace/leak"
        })
        const created = yield* WorkspaceArchive.create(source, 1024 * 1024)
        assert.strictEqual(created._tag, "Archive")
        if (created._tag !== "Archive") return
        assert.strictEqual(created.sha256, WorkspaceArchive.sha256(created.data))

        const target = yield* sandbox.open("ws_archive_target", testLimits)
        assert.isUndefined(yield* WorkspaceArchive.extract(target, created.data))
        assert.strictEqual(readFileSync(join(target.dir, "src", "deep", "a.txt"), "utf8"), "hello\n")
        assert.strictEqual(statSync(join(target.dir, "run.sh")).mode & 0o777, 0o750)
        assert.strictEqual(statSync(join(target.dir, "src", "deep", "a.txt")).uid, target.uid)
        assert.isTrue(lstatSync(join(target.dir, "leak")).isSymbolicLink())
        assert.strictEqual(readlinkSync(join(target.dir, "leak")), "../host-secret.txt")
        // The archive holds the link, never what it points to.
        const listing = yield* sandbox.exec(target, { command: "cat leak 2>/dev/null || echo unreadable" })
        assert.strictEqual(listing.stdout, "unreadable\n")
        const unpacked = gunzipSync(created.data).toString("latin1")
        assert.notInclude(unpacked, secret)
      }))

    it.effect("an archive over the cap is refused; bytes that are no archive fail to unpack; the fingerprint follows the tree", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_archive_limits", testLimits)
        yield* sandbox.exec(ws, { command: "head -c 200000 /dev/urandom > noise.bin" })
        assert.deepStrictEqual(yield* WorkspaceArchive.create(ws, 50_000), { _tag: "TooLarge" })
        assert.include(yield* WorkspaceArchive.extract(ws, Buffer.from("not an archive")), "gzip")

        const before = yield* WorkspaceArchive.fingerprint(ws)
        assert.isString(before)
        assert.strictEqual(yield* WorkspaceArchive.fingerprint(ws), before)
        yield* sandbox.exec(ws, { command: "echo more >> notes.txt" })
        assert.notStrictEqual(yield* WorkspaceArchive.fingerprint(ws), before)
      }))
  })
})
