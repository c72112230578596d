/**
 * Skills (spec 2.1.1 AgentSkill): the system prompt lists each skill's name and
 * description; load_skill gives the model its body under its frontmatter, as a
 * SKILL.md file carries it; metadata is the API user's, stored and returned as
 * given, and never reaches the model. A frontmatter that restates the skill's
 * own name or description is refused.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, send, textOf, toolStep } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

const release = {
  name: "release",
  description: "Cut a release",
  body: "Follow the steps.",
  frontmatter: { version: "1.2", "allowed-tools": ["bash"], "odd key": 1 },
  metadata: { owner: "team-release", reviewed: true }
}
const plain = { name: "plain", description: "No frontmatter", body: "Just the body." }

TestServer.suite()("skills", (it) => {
  it.effect("load_skill reads the body under its frontmatter; metadata is returned to the API and never shown to the model", () =>
    Effect.gen(function*() {
      const { agent, thread } = yield* agentWithThread({ capabilities: { skills: [release, plain] } })
      assert.deepStrictEqual(agent.capabilities.skills, [release, plain])
      const loaded = yield* send(thread.id, toolStep("load_skill", { name: "release" }))
      const read = textOf(loaded.parsed.message)
      assert.strictEqual(
        read,
        "Result: ---\nallowed-tools: [\"bash\"]\n\"odd key\": 1\nversion: \"1.2\"\n---\n\nFollow the steps."
      )
      assert.notInclude(read, "team-release")
      const bare = yield* send(thread.id, toolStep("load_skill", { name: "plain" }))
      assert.strictEqual(textOf(bare.parsed.message), "Result: Just the body.")
    }))

  it.effect("a frontmatter naming the skill's own name or description is refused (400 naming the field), nothing stored", () =>
    Effect.gen(function*() {
      const before = yield* Collection.agents.ids()
      const reply = yield* TestServer.request("POST", "/v1/agents", {
        body: { capabilities: { skills: [{ ...plain, frontmatter: { description: "other" } }] } }
      })
      const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "invalid_request_error")
      assert.deepStrictEqual(error.details, { field: "capabilities.skills[0].frontmatter.description" })
      assert.deepStrictEqual(yield* Collection.agents.ids(), before)
    }))
})
