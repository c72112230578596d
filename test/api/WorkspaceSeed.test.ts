/**
 * A managed workspace's git seed through the whole service, on the real
 * sandbox: a local git server (smart HTTP, `git http-backend`) reached by a
 * name of the test DNS server, cloned on the thread's first run inside the
 * sandbox through the egress proxy (the seed's host is reachable though
 * allowDomains does not list it, and though the workspace is offline);
 * `revision` picks a tag or a commit, `depth` makes a shallow clone, a bad
 * revision fails the run with workspace_unavailable. With private URLs not
 * allowed, a seed URL at a private address is refused at agent create and update.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, bashStep, getRun, getThread, send } from "../support/Conversation.ts"
import { DnsServer } from "../support/DnsServer.ts"
import * as GitServer from "../support/GitServer.ts"
import * as TestServer from "../support/TestServer.ts"

class Git extends Context.Service<Git, GitServer.GitServer>()("test/SeedGitServer") {}

const Harness = Layer.unwrap(
  Effect.gen(function*() {
    const dns = yield* DnsServer
    const git = yield* GitServer.serve
    return Layer.merge(TestServer.layer({ dnsServers: [dns.address] }), Layer.succeed(Git)(git))
  })
).pipe(Layer.provideMerge(DnsServer.layer({ "git.test": "127.0.0.1", "api.test": "127.0.0.1" })))

type Chunk = { readonly type: string } & Record<string, unknown>
const stdoutsOf = (chunks: ReadonlyArray<Chunk>) =>
  chunks.filter((c) => c.type === "tool-output-available").map((c) =>
    (c["output"] as { readonly stdout?: string }).stdout
  )

/** A thread of an agent whose workspace is seeded with `seed` (the git server's URL at git.test). */
const seededThread = (
  seed: Record<string, unknown>,
  network: Record<string, unknown> = { mode: "restricted", allowDomains: ["api.test"] },
  workspace: Record<string, unknown> = {}
) =>
  Effect.gen(function*() {
    const git = yield* Git
    return (yield* agentWithThread({
      workspace: { type: "managed", network, seed: { type: "git", url: git.urlAt("git.test"), ...seed }, ...workspace }
    })).thread
  })

layer(Harness, { timeout: TestServer.setupTimeout })("workspace seed", (it) => {
  it.effect("the first run finds the repository cloned (default branch, whole history) though allowDomains does not list its host", () =>
    Effect.gen(function*() {
      const git = yield* Git
      const thread = yield* seededThread({})
      const { runId, parsed } = yield* send(
        thread.id,
        bashStep("git log --oneline | wc -l; cat README; git branch --show-current; git status --short | wc -l")
      )
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.deepStrictEqual(stdoutsOf(parsed.chunks), [`2\n${git.readmes[1]}main\n0\n`])
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")

      // Later runs keep the workspace as the model left it: no second clone.
      yield* send(thread.id, bashStep("echo changed > README"))
      const next = yield* send(thread.id, bashStep("cat README; git log --oneline | wc -l"))
      assert.deepStrictEqual(stdoutsOf(next.parsed.chunks), ["changed\n2\n"])
    }))

  it.effect("a seeded workspace hibernated and restored keeps the model's changes: it is not cloned again", () =>
    Effect.gen(function*() {
      const recovery = yield* RunRecovery
      const thread = yield* seededThread({}, undefined, { lifecycle: { idleMinutes: 5 } })
      yield* send(thread.id, bashStep("rm README; echo mine > made-by-the-model"))
      yield* TestClock.adjust("6 minutes")
      yield* recovery.pass
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "hibernated")
      const next = yield* send(thread.id, bashStep("ls; cat made-by-the-model"))
      assert.deepStrictEqual(stdoutsOf(next.parsed.chunks), ["file1.txt\nfile2.txt\nmade-by-the-model\nmine\n"])
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")
    }))

  it.effect("an offline workspace is seeded through a proxy opened for the clone only, and stays offline", () =>
    Effect.gen(function*() {
      const git = yield* Git
      const thread = yield* seededThread({}, { mode: "offline" })
      const { parsed } = yield* send(
        thread.id,
        bashStep(`cat README; curl -s --max-time 5 ${git.urlAt("git.test")}/info/refs || echo offline`)
      )
      assert.deepStrictEqual(stdoutsOf(parsed.chunks), [`${git.readmes[1]}offline\n`])
    }))

  it.effect("revision checks out a tag or a commit; depth: 1 makes a shallow clone of one commit", () =>
    Effect.gen(function*() {
      const git = yield* Git
      const log = bashStep("git log --oneline | wc -l; cat README; ls")
      const tag = yield* send((yield* seededThread({ revision: "v1" })).id, log)
      assert.deepStrictEqual(stdoutsOf(tag.parsed.chunks), [`1\n${git.readmes[0]}README\nfile1.txt\n`])

      const commit = yield* send(
        (yield* seededThread({ revision: git.commits[0] })).id,
        bashStep("git rev-parse HEAD; cat README")
      )
      assert.deepStrictEqual(stdoutsOf(commit.parsed.chunks), [`${git.commits[0]}\n${git.readmes[0]}`])

      const shallow = yield* send(
        (yield* seededThread({ depth: 1 })).id,
        bashStep("git log --oneline | wc -l; git rev-parse HEAD; cat README")
      )
      assert.deepStrictEqual(stdoutsOf(shallow.parsed.chunks), [`1\n${git.commits[1]}\n${git.readmes[1]}`])
    }))

  it.effect("a revision the repository does not have fails the run with workspace_unavailable and leaves the workspace failed and empty", () =>
    Effect.gen(function*() {
      const thread = yield* seededThread({ revision: "no-such-revision" })
      const { runId, parsed } = yield* send(thread.id, bashStep("ls"))
      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.terminalReason, "workspace_unavailable")
      assert.strictEqual(run.error?.code, "workspace_unavailable")
      assert.include(run.error?.message, "revision 'no-such-revision'")
      assert.include(run.error?.message, "couldn't find remote ref no-such-revision")
      assert.deepStrictEqual(parsed.chunks.find((c) => c.type === "data-svc-terminal"), {
        type: "data-svc-terminal",
        data: { terminalReason: "workspace_unavailable" }
      })
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "failed")
      assert.deepStrictEqual(readdirSync(join(TestServer.testWorkspaceRoot, "workspaces", thread.id)), [])
    }))

  it.effect("an unreachable seed fails the run with workspace_unavailable saying why", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({
        workspace: { type: "managed", seed: { type: "git", url: "http://nowhere.test/repo.git" } }
      })
      const { runId } = yield* send(thread.id, bashStep("ls"))
      const run = yield* getRun(runId)
      assert.strictEqual(run.terminalReason, "workspace_unavailable")
      assert.include(run.error?.message, "could not be cloned from http://nowhere.test/repo.git")
      assert.include(run.error?.message, "403")
    }))
})

layer(
  Layer.unwrap(Effect.map(DnsServer, (dns) => TestServer.layer({ allowPrivateUrls: false, dnsServers: [dns.address] })))
    .pipe(
      Layer.provideMerge(
        DnsServer.layer({ "git.internal.example.com": "10.0.0.9", "git.example.com": "93.184.215.14" })
      )
    ),
  { timeout: TestServer.setupTimeout }
)("workspace seed URL policy", (it) => {
  const create = (url: string) =>
    TestServer.request("POST", "/v1/agents", { body: { workspace: { type: "managed", seed: { type: "git", url } } } })

  it.effect("a seed URL that is not https on a public address is refused at create, validate and update with 400 url_not_allowed", () =>
    Effect.gen(function*() {
      for (
        const url of [
          "https://10.1.2.3/repo.git",
          "https://git.internal.example.com/repo.git",
          "http://git.example.com/repo.git",
          "git://git.example.com/repo.git"
        ]
      ) {
        const reply = yield* create(url)
        assert.strictEqual(reply.status, 400, `${url}: ${reply.text}`)
        const error = (reply.json as {
          readonly error: { readonly code: string; readonly details?: unknown; readonly message: string }
        }).error
        assert.strictEqual(error.code, "url_not_allowed")
        assert.deepStrictEqual(error.details, { field: "workspace.seed.url" })
      }
      const validate = yield* TestServer.request("POST", "/v1/agents/validate", {
        body: { workspace: { type: "managed", seed: { type: "git", url: "https://10.1.2.3/repo.git" } } }
      })
      assert.strictEqual(validate.status, 400)

      const agent = yield* Collection.agents.create({
        workspace: { type: "managed", seed: { type: "git", url: "https://git.example.com/repo.git" } }
      })
      const patched = yield* TestServer.request("PATCH", `/v1/agents/${agent.id}`, {
        body: {
          workspace: { type: "managed", seed: { type: "git", url: "https://git.internal.example.com/repo.git" } }
        }
      })
      assert.strictEqual(patched.status, 400)
      assert.include(patched.text, "url_not_allowed")
    }))
})
