/**
 * A thread's workspace files through the API (issue 27), on the real sandbox:
 * the files an agent wrote and the commands it ran are listed a directory at
 * a time and downloaded byte for byte, read from the workspace's directory
 * without its sandbox; paths out of the workspace, through symbolic links
 * (pointing out of it or not), or of the wrong kind are refused naming
 * `path`; another workspace's thread is 403; a thread without a managed
 * workspace, or whose files are not on this node, is 409 workspace_unavailable.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { Page } from "../../domain/Page.ts"
import { WorkspaceEntry } from "../../domain/WorkspaceEntry.ts"
import { agentWithThread, outputsOf, send, toolStep } from "../support/Conversation.ts"
import { expectDenied, expectInvalid, expectNotFound } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"
import { download, replyOf } from "../support/Uploads.ts"

const EntryPage = Page(WorkspaceEntry)
const offline = { type: "managed", network: { mode: "offline" } }

const list = (threadId: string, query = "", key?: string) =>
  TestServer.request("GET", `/v1/threads/${threadId}/workspace/files${query}`, key === undefined ? {} : { key })
const content = (threadId: string, path: string) =>
  download(`/v1/threads/${threadId}/workspace/files/content?path=${encodeURIComponent(path)}`)
const names = (page: typeof EntryPage.Type) => page.data.map((e) => `${e.type} ${e.path}`)

/** A thread whose agent wrote a text file, a binary file two directories down, three symbolic links and a FIFO. */
const populated = Effect.gen(function*() {
  const { thread } = yield* agentWithThread({ workspace: offline })
  const command = [
    "mkdir -p docs/deep",
    "printf '\\000\\001\\377' > docs/deep/bin.dat",
    "ln -s /etc/passwd passwd-link",
    "ln -s /etc etc-link",
    "ln -s notes notes-link",
    "mkfifo pipe"
  ].join(" && ")
  const { parsed } = yield* send(
    thread.id,
    [toolStep("write_file", { path: "notes/hello.txt", content: "hi from the model\n" }), toolStep("bash", { command })]
      .join("\n")
  )
  assert.deepStrictEqual(outputsOf(parsed.chunks), [
    { path: "notes/hello.txt", bytes: 18 },
    { exitCode: 0, stdout: "", stderr: "" }
  ])
  return thread.id
})

TestServer.suite()("a thread's workspace files", (it) => {
  it.effect("lists a directory at a time (sorted, paged, links as links) and downloads a file's exact bytes", () =>
    Effect.gen(function*() {
      const threadId = yield* populated
      const root = yield* TestServer.expectOk(yield* list(threadId), 200, EntryPage)
      assert.deepStrictEqual(names(root), [
        "directory docs",
        "symlink etc-link",
        "directory notes",
        "symlink notes-link",
        "symlink passwd-link",
        "other pipe"
      ])
      assert.deepStrictEqual(root.data.find((e) => e.name === "passwd-link")?.size, "/etc/passwd".length)
      assert.isFalse(root.hasMore)

      // A page at a time: the cursor carries on after the last name.
      const first = yield* TestServer.expectOk(yield* list(threadId, "?limit=2"), 200, EntryPage)
      assert.deepStrictEqual(names(first), ["directory docs", "symlink etc-link"])
      assert.isTrue(first.hasMore)
      const second = yield* TestServer.expectOk(
        yield* list(threadId, `?limit=2&cursor=${first.nextCursor}`),
        200,
        EntryPage
      )
      assert.deepStrictEqual(names(second), ["directory notes", "symlink notes-link"])

      const deep = yield* TestServer.expectOk(yield* list(threadId, "?path=docs/deep"), 200, EntryPage)
      assert.deepStrictEqual(deep.data.map(({ modifiedAt: _, ...e }) => e), [
        { name: "bin.dat", path: "docs/deep/bin.dat", type: "file", size: 3 }
      ])
      assert.match(deep.data[0]!.modifiedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

      const binary = yield* content(threadId, "docs/deep/bin.dat")
      assert.strictEqual(binary.status, 200)
      assert.deepStrictEqual([...binary.bytes], [0, 1, 255])
      assert.strictEqual(binary.headers.get("content-type"), "application/octet-stream")
      assert.strictEqual(binary.headers.get("content-length"), "3")
      assert.strictEqual(
        binary.headers.get("content-disposition"),
        "attachment; filename=\"bin.dat\"; filename*=UTF-8''bin.dat"
      )
      assert.strictEqual(binary.headers.get("content-security-policy"), "default-src 'none'; sandbox")
      assert.strictEqual(binary.headers.get("x-content-type-options"), "nosniff")

      const text = yield* content(threadId, "notes/hello.txt")
      assert.strictEqual(text.status, 200)
      assert.strictEqual(new TextDecoder().decode(text.bytes), "hi from the model\n")
      assert.strictEqual(text.headers.get("content-type"), "text/plain")
    }))

  it.effect("refuses paths out of the workspace, through any symbolic link, and of the wrong kind; 404 a missing one", () =>
    Effect.gen(function*() {
      const threadId = yield* populated
      for (const path of ["../x", "/etc/passwd", "notes/../../x", "notes/\u0000"]) {
        yield* expectInvalid(replyOf(yield* content(threadId, path)), "path")
        yield* expectInvalid(yield* list(threadId, `?path=${encodeURIComponent(path)}`), "path")
      }
      // A link is never followed: not to a file out of the workspace, not through a directory out of it, not inside it.
      for (const path of ["passwd-link", "etc-link/passwd", "notes-link/hello.txt"]) {
        const refused = yield* expectInvalid(replyOf(yield* content(threadId, path)), "path")
        assert.include(refused.message, "is a symbolic link")
        assert.notInclude(replyOf(yield* content(threadId, path)).text, "root:")
      }
      yield* expectInvalid(yield* list(threadId, "?path=etc-link"), "path")
      // Kinds: a directory is listed, not downloaded; a file downloaded, not listed.
      yield* expectInvalid(replyOf(yield* content(threadId, "notes")), "path")
      yield* expectInvalid(replyOf(yield* content(threadId, "")), "path")
      yield* expectInvalid(yield* list(threadId, "?path=notes/hello.txt"), "path")
      // A FIFO no one writes to is refused at once, never waited on.
      yield* expectInvalid(replyOf(yield* content(threadId, "pipe")), "path")
      yield* expectNotFound(replyOf(yield* content(threadId, "notes/missing.txt")), "file_not_found")
      yield* expectNotFound(yield* list(threadId, "?path=missing"), "file_not_found")
      yield* expectInvalid(yield* list(threadId, "?cursor=not-a-cursor%2F"), "cursor")
    }))

  it.effect("another workspace's thread is 403, an unknown thread 404", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace: offline })
      yield* expectDenied(yield* list(thread.id, "", TestServer.Keys.b))
      yield* expectDenied(
        replyOf(yield* download(`/v1/threads/${thread.id}/workspace/files/content?path=a`, TestServer.Keys.b))
      )
      yield* expectNotFound(yield* list("thread_AAAAAAAAAAAAAAAAAAAAAA"), "thread_not_found")
    }))

  it.effect("a workspace not yet opened has an empty root; a thread without one, or whose files are elsewhere, is 409", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace: offline })
      const empty = yield* TestServer.expectOk(yield* list(thread.id), 200, EntryPage)
      assert.deepStrictEqual(empty, { object: "list", data: [], hasMore: false, nextCursor: null, limit: 20 })
      yield* expectNotFound(yield* list(thread.id, "?path=src"), "file_not_found")
      yield* expectNotFound(replyOf(yield* content(thread.id, "a.txt")), "file_not_found")

      const bare = yield* agentWithThread()
      const none = yield* TestServer.expectError(yield* list(bare.thread.id), 409, "api_error", "workspace_unavailable")
      assert.deepStrictEqual(none.details, { reason: "none" })
      yield* TestServer.expectError(
        replyOf(yield* content(bare.thread.id, "a.txt")),
        409,
        "api_error",
        "workspace_unavailable"
      )

      // This node lets go of its copy (hibernated, or the thread moved): the snapshot holds the files.
      const threadId = yield* populated
      rmSync(join(TestServer.testWorkspaceRoot, "workspaces", threadId), { recursive: true, force: true })
      const elsewhere = yield* TestServer.expectError(yield* list(threadId), 409, "api_error", "workspace_unavailable")
      assert.deepStrictEqual(elsewhere.details, { reason: "elsewhere" })
      // A run opens the workspace here again, restored from its snapshot: readable again.
      yield* send(threadId, "/text back")
      const back = yield* TestServer.expectOk(yield* list(threadId, "?path=notes"), 200, EntryPage)
      assert.deepStrictEqual(names(back), ["file notes/hello.txt"])
    }))
})
