/**
 * The agent's code-hosting grant (spec 2.1.1 `codehost`, 4.1 rule 7, 4.8
 * "Agent grant", 7 `resource_in_use`): checked at create and validate against
 * the catalog and the connection (which must exist in the workspace, and whose
 * grant the repositories may only narrow); a connection agents use cannot be deleted.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Agent } from "../../domain/Agent.ts"
import * as Harness from "../support/github/Harness.ts"
import * as TestServer from "../support/TestServer.ts"

const { request, expectOk, expectError, Keys } = TestServer
const workspace = { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } }

const refused = (codehost: Record<string, unknown>, field: string, key?: string) =>
  Effect.gen(function*() {
    for (const path of ["/v1/agents", "/v1/agents/validate"]) {
      const reply = yield* request("POST", path, {
        body: { workspace, capabilities: { codehost } },
        ...(key === undefined ? {} : { key })
      })
      const error = yield* expectError(reply, 400, "invalid_request_error", "invalid_request_error")
      assert.deepStrictEqual(error.details, { field }, reply.text)
    }
  })

layer(Harness.layer(), { timeout: TestServer.setupTimeout })("the agent's code-hosting grant", (it) => {
  it.effect("a grant on a ready connection is saved as sent; repositories, tool names, gated tools and branch names are checked", () =>
    Effect.gen(function*() {
      const { id } = yield* Harness.connect({ account: "acme", repositories: ["acme/api", "acme/web"] })
      const codehost = {
        connectionId: id,
        repositories: ["acme/api"],
        git: { branchPrefix: "agent/", baseBranches: ["main"] },
        approval: "once" as const,
        gatedTools: ["codehost_push_branch", "codehost_merge_pull_request"],
        allowedTools: [
          "codehost_get_issue",
          "codehost_checkout",
          "codehost_push_branch",
          "codehost_merge_pull_request",
          "codehost_search_repositories"
        ]
      }
      const agent = yield* expectOk(
        yield* request("POST", "/v1/agents", { body: { workspace, capabilities: { codehost } } }),
        200,
        Agent
      )
      assert.deepStrictEqual<unknown>(agent.capabilities.codehost, codehost)
      assert.deepStrictEqual(
        (yield* request("POST", "/v1/agents/validate", { body: { workspace, capabilities: { codehost } } })).json,
        { valid: true }
      )

      yield* refused({ connectionId: "chc_unknown" }, "capabilities.codehost.connectionId")
      yield* refused({ connectionId: id }, "capabilities.codehost.connectionId", Keys.b)
      yield* refused({ connectionId: id, repositories: ["acme/other"] }, "capabilities.codehost.repositories[0]")
      yield* refused(
        { connectionId: id, repositories: ["acme/api", "ACME/api"] },
        "capabilities.codehost.repositories[1]"
      )
      yield* refused({ connectionId: id, repositories: ["not a repo"] }, "capabilities.codehost.repositories[0]")
      yield* refused(
        { connectionId: id, allowedTools: ["codehost_get_issue", "get_issue"] },
        "capabilities.codehost.allowedTools[1]"
      )
      yield* refused({ connectionId: id, blockedTools: ["codehost_nope"] }, "capabilities.codehost.blockedTools[0]")
      yield* refused(
        { connectionId: id, approval: "always", gatedTools: ["codehost_get_issue"] },
        "capabilities.codehost.gatedTools[0]"
      )
      yield* refused({ connectionId: id, gatedTools: ["codehost_push_branch"] }, "capabilities.codehost.gatedTools")
      yield* refused(
        { connectionId: id, git: { branchPrefix: "bad..prefix" } },
        "capabilities.codehost.git.branchPrefix"
      )
      yield* refused(
        { connectionId: id, git: { baseBranches: ["ma in"] } },
        "capabilities.codehost.git.baseBranches[0]"
      )
    }))

  it.effect("a connection an agent uses cannot be deleted: 409 resource_in_use naming the agents", () =>
    Effect.gen(function*() {
      const { id } = yield* Harness.connect({ account: "globex", repositories: ["globex/app"] })
      const agent = yield* expectOk(
        yield* request("POST", "/v1/agents", { body: { workspace, capabilities: { codehost: { connectionId: id } } } }),
        200,
        Agent
      )
      const blocked = yield* expectError(
        yield* request("DELETE", `/v1/codehost-connections/${id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.deepStrictEqual(blocked.details, { inUseByAgentIds: [agent.id] })
      yield* request("DELETE", `/v1/agents/${agent.id}`)
      assert.strictEqual((yield* request("DELETE", `/v1/codehost-connections/${id}`)).status, 200)
    }))
})
