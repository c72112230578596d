/**
 * The console's inbox (spec 4.4) in a real headless Chromium against the
 * real service and a real MCP server: a run parked on an approval appears
 * in the inbox with the tool's input, a person approves it (or denies
 * another) and the run view follows the run to its end; a question is
 * answered there, a refused answer showing the service's message first.
 * Screenshots go to test-artifacts/console/.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import type { Page, Request } from "playwright-core"
import * as Browser from "../support/Browser.ts"
import * as Collection from "../support/Collection.ts"
import { newThread, outcomeOf, runIdOf, runView, send, signIn, textsOf, toolCard } from "../support/ConsolePage.ts"
import { getRun } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as Interactions from "../support/Interactions.ts"
import * as TestServer from "../support/TestServer.ts"

/** The inbox's card still waiting for a person, of this kind. */
const pendingCard = (page: Page, kind: "Approval request" | "Question") =>
  page.getByRole("region", { name: "Inbox" }).locator(`article[aria-label="${kind}"]:not([data-resolved])`)

/** The stream requests the page made that resume after a frame (Last-Event-ID), as `runId:id`. */
const resumptions = (page: Page) => {
  const seen: Array<string> = []
  page.on("request", (request: Request) => {
    const match = /\/v1\/runs\/([^/]+)\/stream$/.exec(request.url())
    const last = request.headers()["last-event-id"]
    if (match !== null && last !== undefined) seen.push(`${match[1]}:${last}`)
  })
  return seen
}

const question = {
  title: "Pick a color",
  details: "For the banner",
  questions: [
    { id: "color", prompt: "Which color?", options: [{ id: "red", label: "Red" }, { id: "blue", label: "Blue" }] },
    { id: "note", prompt: "Anything else?", multiline: true }
  ],
  actions: [{ id: "skip", label: "Skip" }]
}

TestServer.suite()("console inbox", (it) => {
  it.effect("a run parked on an approval shows in the inbox; approving resumes it to completion, denying blocks the tool", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({
        name: "gated",
        transport: "http",
        url: gate.url,
        approval: "always"
      })
      const agent = yield* Collection.agents.create({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const browser = yield* Browser.open
      const resumed = resumptions(browser.page)
      const parked = yield* Browser.on(browser, async (page) => {
        await signIn(page, api.url, TestServer.Keys.a)
        await newThread(page, agent.id)
        await send(page, `/tool mcp__gated__echo {"text":"needs a yes"}`)
        const card = pendingCard(page, "Approval request")
        await card.waitFor()
        return {
          runId: await runIdOf(page),
          heading: await card.getByRole("heading", { level: 3 }).textContent(),
          input: await card.getByLabel("Input").textContent(),
          status: await runView(page).locator("header .status").textContent(),
          toolState: await toolCard(page, "mcp__gated__echo").getAttribute("data-state"),
          count: await page.getByRole("region", { name: "Inbox" }).locator(".count").textContent()
        }
      })
      yield* browser.screenshot("approval-pending")
      assert.strictEqual((yield* getRun(parked.runId)).status, "waiting_for_approval")
      assert.strictEqual(parked.heading, "Approve mcp__gated__echo?")
      assert.strictEqual(parked.input, JSON.stringify({ text: "needs a yes" }, null, 2))
      assert.strictEqual(parked.status, "waiting for approval")
      assert.strictEqual(parked.toolState, "waiting for approval")
      assert.strictEqual(parked.count, "1")

      const approved = yield* Browser.on(browser, async (page) => {
        const card = pendingCard(page, "Approval request")
        await card.getByLabel("Reason (optional)").fill("Looks fine")
        await card.getByRole("button", { name: "Approve" }).click()
        const outcome = await outcomeOf(page)
        return {
          outcome,
          texts: await textsOf(page),
          cardStatus: await page.getByRole("region", { name: "Inbox" }).getByRole("status").first().textContent(),
          count: await page.getByRole("region", { name: "Inbox" }).locator(".count").textContent(),
          toolState: await toolCard(page, "mcp__gated__echo").getAttribute("data-state"),
          inputs: await toolCard(page, "mcp__gated__echo").getByLabel("Input").count(),
          waiting: await toolCard(page, "mcp__gated__echo").locator(".waiting").count(),
          steps: await runView(page).locator("section.step").count()
        }
      })
      yield* browser.screenshot("approval-resumed")
      const [interaction] = yield* Interactions.interactions(`runId=${parked.runId}`)
      assert.strictEqual(interaction.decision, "allow")
      assert.strictEqual(interaction.reason, "Looks fine")
      assert.strictEqual(approved.cardStatus, "Approved. (resolved)")
      assert.strictEqual(approved.count, "0")
      assert.strictEqual(approved.outcome, "Run completed.")
      assert.deepStrictEqual(approved.texts, ["Result: needs a yes"])
      assert.strictEqual(approved.toolState, "done")
      // The resumed run goes on in the parked step: one card, its input once, the waiting note gone.
      assert.strictEqual(approved.inputs, 1)
      assert.strictEqual(approved.waiting, 0)
      assert.strictEqual(approved.steps, (yield* getRun(parked.runId)).usage?.steps)
      // While parked the page waited on the stream after its last frame (Last-Event-ID), and so saw the resumption.
      assert.isTrue(resumed.some((r) => r.startsWith(`${parked.runId}:`)), resumed.join(", "))

      const denied = yield* Browser.on(browser, async (page) => {
        await send(page, `/tool mcp__gated__echo {"text":"not this"}`)
        const card = pendingCard(page, "Approval request")
        await card.getByRole("button", { name: "Deny" }).click()
        const outcome = await outcomeOf(page)
        return {
          runId: await runIdOf(page),
          outcome,
          toolState: await toolCard(page, "mcp__gated__echo").getAttribute("data-state"),
          note: await toolCard(page, "mcp__gated__echo").locator(".tool-denied").textContent(),
          reason: await toolCard(page, "mcp__gated__echo").locator(".tool-denied-reason").textContent()
        }
      })
      yield* browser.screenshot("approval-denied")
      assert.notStrictEqual(denied.runId, parked.runId)
      assert.strictEqual((yield* Interactions.interactions(`runId=${denied.runId}`))[0].decision, "deny")
      assert.strictEqual(denied.outcome, "Run completed.")
      assert.strictEqual(denied.toolState, "denied")
      assert.strictEqual(denied.note, "Denied: the tool did not run.")
      // The reason the model read (data-svc-tool-denied): the inbox denies without one.
      assert.strictEqual(denied.reason, "Reason: The tool call was denied.")
      assert.deepStrictEqual(browser.errors(), [])
    }).pipe(Effect.scoped))

  it.effect("a question is answered in the inbox: a refused answer shows the service's message, a complete one resumes the run", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* Collection.agents.create({ capabilities: { userInteraction: true } })
      const browser = yield* Browser.open
      const asked = yield* Browser.on(browser, async (page) => {
        await signIn(page, api.url, TestServer.Keys.a)
        await newThread(page, agent.id)
        await send(page, `/tool ask_question ${JSON.stringify(question)}\n/text thanks`)
        const card = pendingCard(page, "Question")
        await card.waitFor()
        return {
          runId: await runIdOf(page),
          title: await card.getByRole("heading", { level: 3 }).textContent(),
          details: await card.locator(".details").textContent(),
          prompts: await card.locator("legend").allTextContents(),
          buttons: await card.getByRole("button").allTextContents(),
          status: await runView(page).locator("header .status").textContent()
        }
      })
      yield* browser.screenshot("question-pending")
      assert.strictEqual(asked.title, "Pick a color")
      assert.strictEqual(asked.details, "For the banner")
      assert.deepStrictEqual(asked.prompts, ["Which color?", "Anything else?"])
      assert.deepStrictEqual(asked.buttons, ["Send answer", "Skip", "Dismiss"])
      assert.strictEqual(asked.status, "waiting for input")
      const [pending] = yield* Interactions.interactions(`runId=${asked.runId}`)

      // Only the color: the service refuses (400) and the card says why, in the service's words.
      const partial = { inputResponses: [{ requestId: "color", optionId: "blue" }] }
      const refused = yield* TestServer.expectError(
        yield* TestServer.request("POST", `/v1/interactions/${pending.id}/resolve`, { body: partial }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      const shown = yield* Browser.on(browser, async (page) => {
        const card = pendingCard(page, "Question")
        await card.getByLabel("Blue").check()
        await card.getByRole("button", { name: "Send answer" }).click()
        const status = card.getByRole("status").and(page.locator(".error"))
        await status.waitFor()
        return status.textContent()
      })
      yield* browser.screenshot("question-refused")
      assert.strictEqual(shown, refused.message)
      assert.strictEqual((yield* getRun(asked.runId)).status, "waiting_for_input")

      const answered = yield* Browser.on(browser, async (page) => {
        const card = pendingCard(page, "Question")
        await card.getByLabel("Answer").fill("make it bold")
        await card.getByRole("button", { name: "Send answer" }).click()
        const outcome = await outcomeOf(page)
        return {
          outcome,
          texts: await textsOf(page),
          output: await toolCard(page, "ask_question").getByLabel("Output").textContent()
        }
      })
      yield* browser.screenshot("question-answered")
      const resolution = {
        inputResponses: [{ requestId: "color", optionId: "blue" }, { requestId: "note", text: "make it bold" }]
      }
      const [settled] = yield* Interactions.interactions(`runId=${asked.runId}`)
      assert.strictEqual(settled.status, "resolved")
      assert.deepStrictEqual(settled.resolution, resolution)
      assert.strictEqual(answered.outcome, "Run completed.")
      assert.deepStrictEqual(answered.texts, ["thanks"])
      assert.deepStrictEqual(TestServer.parseJson(answered.output ?? ""), resolution)
      assert.deepStrictEqual(browser.errors(), [])
    }).pipe(Effect.scoped))
})
