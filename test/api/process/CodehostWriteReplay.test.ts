/**
 * Write replay (spec 4.8, 7 `codehost_action_outcome_unknown`) across a
 * kill -9: a step makes three writes at once; one completes, one fails
 * definitely (GitHub answers 404), and the third is in GitHub's hands (the
 * fake applied it and holds its answer) when the service is SIGKILLed. The
 * restarted service resumes the run and replays the step: the completed write
 * replays its result and the failed one its error, neither sent again; the
 * write never settled answers codehost_action_outcome_unknown, and is not
 * sent again either: GitHub has each write exactly once.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import type { UIMessageChunk } from "ai"
import { Effect, Queue, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { callIdsOf, failuresOf, getRun, startRun, streamOf } from "../../support/Conversation.ts"
import * as Harness from "../../support/github/Harness.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import * as TestServer from "../../support/TestServer.ts"

const { Keys } = TestServer

/** The journal's settlements as they are written (a trigger of the test's own on the service's table). */
const settlements = (url: string) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 2 })
    yield* sql.unsafe(`CREATE FUNCTION test_settled() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('test_settled', NEW.tool_call_id || ' ' || NEW.status); RETURN NEW; END $$`)
    yield* sql.unsafe(
      `CREATE TRIGGER test_settled AFTER UPDATE ON codehost_writes FOR EACH ROW EXECUTE FUNCTION test_settled()`
    )
    return yield* sql.listen("test_settled")
  }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)

/** The results the stream shows for the call `id`: `{ output }`, or `{ error }` (`code: message`) for an expected failure. */
type Result = { readonly output?: unknown; readonly error?: string }
const resultOf = (chunks: ReadonlyArray<UIMessageChunk>, id: string): ReadonlyArray<Result> => {
  const failed = failuresOf(chunks).filter((f) => f.toolCallId === id)
  if (failed.length > 0) return failed.map((f) => ({ error: `${f.error.code}: ${f.error.message}` }))
  return chunks.flatMap((
    c
  ) => (c.type === "tool-output-available" && c.toolCallId === id ? [{ output: c.output }] : []))
}

describe("write replay across a kill -9", () => {
  it.live(
    "a completed write replays its result, a failed one its error, an unsettled one answers codehost_action_outcome_unknown; GitHub has each once",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const { gh, env: github } = yield* Harness.forProcess
        const repo = gh.state.addRepo("rp/app")
        repo.issues.push({
          number: 1,
          title: "Flaky test",
          body: "",
          state: "open",
          labels: [],
          comments: [],
          user: "octo"
        })
        const env = {
          ...github,
          DATABASE_URL: db.url,
          SVC_API_KEYS: `${Keys.a}:org_replay:prod`,
          SVC_MASTER_KEY: TestServer.testMasterKey,
          SVC_WORKSPACE_ROOT: TestServer.testWorkspaceRoot,
          SVC_QUIET: "1",
          SVC_RUNNER_HOST: "127.0.0.1"
        }
        const node = Effect.gen(function*() {
          return yield* ServiceProcess.start({
            ...env,
            PORT: String(yield* TestServer.freePort),
            SVC_RUNNER_PORT: String(yield* TestServer.freePort)
          })
        })
        const on = (service: ServiceProcess.ServiceProcess) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          effect.pipe(
            Effect.provideService(TestServer.TestApi, TestServer.client(service.url)),
            Effect.provideService(Harness.GitHub, gh)
          )

        const first = yield* node
        const threadId = yield* on(first)(Effect.gen(function*() {
          const { id } = yield* Harness.connect({ account: "rp", repositories: ["rp/app"] })
          const agent = yield* TestServer.request("POST", "/v1/agents", {
            body: {
              workspace: { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } },
              capabilities: { codehost: { connectionId: id, approval: "never" } }
            }
          })
          const agentId = (agent.json as { readonly id: string }).id
          const thread = (yield* TestServer.request("POST", "/v1/threads", { body: { agentId } })).json as {
            readonly id: string
          }
          return thread.id
        }))

        const settled = yield* settlements(db.url)
        const held = gh.hold("POST", "/api/v3/repos/rp/app/issues", { apply: true })
        const receipt = yield* on(first)(startRun(threadId, {
          input: [
            `/tools ${
              JSON.stringify([
                { name: "codehost_comment_issue", input: { repository: "rp/app", number: 1, body: "Looking into it" } },
                { name: "codehost_close_issue", input: { repository: "rp/app", number: 99 } },
                { name: "codehost_create_issue", input: { repository: "rp/app", title: "Filed once" } }
              ])
            }`,
            "/text done"
          ].join("\n")
        }))
        // The comment and the refused close are settled; the new issue exists on GitHub, its answer held.
        yield* held.arrived
        const seen = [yield* Queue.take(settled), yield* Queue.take(settled)].map((n) => n.payload.split(" ")[1]).sort()
        assert.deepStrictEqual(seen, ["completed", "failed"])
        yield* ServiceProcess.stop(first, "SIGKILL")
        yield* held.release

        const second = yield* node
        const { run, chunks } = yield* on(second)(Effect.gen(function*() {
          const { chunks } = yield* streamOf(receipt.runId)
          return { run: yield* getRun(receipt.runId), chunks }
        }))
        yield* ServiceProcess.stop(second)
        assert.strictEqual(run.status, "completed")
        const [comment, close, create] = callIdsOf(chunks)
        const commentId = repo.issues[0].comments[0]?.id
        assert.deepStrictEqual(resultOf(chunks, comment), [{
          output: { id: commentId, html_url: `https://github.example/rp/app/issues/1#issuecomment-${commentId}` }
        }])
        assert.deepStrictEqual(resultOf(chunks, close), [{
          error: "codehost_github_error: GitHub answered 404: Not Found"
        }])
        const unknown = resultOf(chunks, create)
        assert.strictEqual(unknown.length, 1)
        assert.match(
          unknown[0].error ?? "",
          /^codehost_action_outcome_unknown: This write was sent to GitHub but its outcome was never recorded/
        )
        assert.isTrue(chunks.some((c) => c.type === "reset-step"))

        // GitHub received each write exactly once.
        const sent = (line: string) => gh.requests.filter((r) => r === line).length
        assert.strictEqual(sent("POST /api/v3/repos/rp/app/issues/1/comments"), 1)
        assert.strictEqual(sent("PATCH /api/v3/repos/rp/app/issues/99"), 1)
        assert.strictEqual(sent("POST /api/v3/repos/rp/app/issues"), 1)
        assert.deepStrictEqual(repo.issues.map((i) => [i.title, i.comments.map((c) => c.body)]), [["Flaky test", [
          "Looking into it"
        ]], ["Filed once", []]])
      }).pipe(Effect.scoped),
    180_000
  )
})
