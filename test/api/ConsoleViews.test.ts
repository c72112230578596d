/**
 * The console as a place to work, in a real headless Chromium against the
 * real service and a real MCP server: a conversation keeps every turn (a
 * second message appends; a reload shows the whole history, tool calls and
 * files, the thread named by its first message); a run waiting on a person
 * says so in the thread and its list, and approving it from the inbox view
 * resumes it; the runs view filters; the agent editor shows the envelope's
 * field error next to its field, creates on a good definition, edits, and
 * deletes after asking; registrations (secrets write-only, tool servers) are
 * managed from their views. A screenshot of each view goes to
 * test-artifacts/console/ (gitignored).
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Page } from "playwright-core"
import * as Browser from "../support/Browser.ts"
import * as Collection from "../support/Collection.ts"
import { newThread, openView, outcomeOf, runIdOf, runView, send, signIn, turns } from "../support/ConsolePage.ts"
import { getRun } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

/** An agent calling the tools of a gate MCP server registered as `name`. */
const toolAgent = (name: string, key: string, approval?: "always") =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({
      name,
      transport: "http",
      url: gate.url,
      ...(approval === undefined ? {} : { approval })
    }, key)
    const agent = yield* Collection.agents.create({
      capabilities: { mcp: { toolServerIds: [server.id] } },
      metadata: { name: `${name} helper` }
    }, key)
    return { gate, server, agent }
  })

/** The thread's entry in the side list. */
const threadItem = (page: Page, threadId: string) =>
  page.getByRole("navigation", { name: "Agents and threads" }).locator(`[data-thread-id="${threadId}"]`)

/**
 * Each test drives a whole task through the page (several runs, a reload); on a loaded machine
 * (CI shares its cores) that can pass the default 30 s, so these get 60 s.
 */
const slow = 60_000

const conversation = (page: Page) => page.getByRole("region", { name: "Conversation" })

TestServer.suite()("console views", (it) => {
  it.effect(
    "a second message appends a turn; a reload shows every turn from the history (messages, tool calls, files) and names the thread by its first message",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const { agent } = yield* toolAgent("notes", TestServer.Keys.a)
        const first = `/tool mcp__notes__echo {"text":"first"}`
        const browser = yield* Browser.open
        const threadId = yield* Browser.on(browser, async (page) => {
          await signIn(page, api.url, TestServer.Keys.a)
          const threadId = await newThread(page, agent.id)
          await send(page, first)
          await outcomeOf(page)
          return threadId
        })
        // The service runs on TestClock: without this both runs have the same createdAt, and the
        // history (oldest first by createdAt, then id) would order them by their random ids.
        yield* TestClock.adjust("1 second")
        const seen = yield* Browser.on(browser, async (page) => {
          await page.getByLabel("Attach files").setInputFiles({
            name: "notes.txt",
            mimeType: "text/plain",
            buffer: Buffer.from("Remember the milk.")
          })
          await send(page, "/text Second answer.")
          await turns(page).nth(1).locator(".terminal .outcome").waitFor()
          const live = {
            turns: await turns(page).count(),
            users: await turns(page).locator(".user > p:not(.meta)").allTextContents(),
            firstOutcome: await turns(page).first().locator(".terminal .outcome").textContent()
          }
          await page.reload()
          await turns(page).nth(1).locator(".terminal .outcome").waitFor()
          await conversation(page).getByText("Files and previews (1)").click()
          await conversation(page).getByRole("button", { name: "Preview notes.txt" }).click()
          const preview = conversation(page).locator(".preview pre")
          await preview.waitFor()
          await threadItem(page, threadId).locator(".name").getByText(first).waitFor()
          return {
            threadId,
            live,
            url: page.url(),
            turns: await turns(page).count(),
            users: await turns(page).locator(".user > p:not(.meta)").allTextContents(),
            files: await turns(page).nth(1).locator(".user .meta").textContent(),
            echo: await turns(page).first().getByRole("article", { name: "Tool call mcp__notes__echo" }).getAttribute(
              "data-state"
            ),
            texts: await turns(page).nth(1).locator("p.text").allTextContents(),
            outcomes: await turns(page).locator(".terminal .outcome").allTextContents(),
            title: await conversation(page).locator(":scope > header h2").textContent(),
            preview: await preview.textContent()
          }
        })
        yield* browser.screenshot("conversation")
        assert.deepStrictEqual(seen.live, {
          turns: 2,
          users: [first, "/text Second answer."],
          firstOutcome: "Run completed."
        })
        assert.isTrue(seen.url.endsWith(`#/threads/${seen.threadId}`), seen.url)
        assert.strictEqual(seen.turns, 2)
        assert.deepStrictEqual(seen.users, [first, "/text Second answer."])
        assert.strictEqual(seen.files, "Files: notes.txt")
        assert.strictEqual(seen.echo, "done")
        assert.deepStrictEqual(seen.texts, ["Second answer."])
        assert.deepStrictEqual(seen.outcomes, ["Run completed.", "Run completed."])
        assert.strictEqual(seen.title, `${first} ${seen.threadId} with notes helper`)
        assert.strictEqual(seen.preview, "Remember the milk.")
        assert.deepStrictEqual(browser.errors(), [])
      }).pipe(Effect.scoped),
    slow
  )

  it.effect(
    "a run waiting on a person shows 'waiting for approval' (thread and list, after a reload too); approving from the inbox view resumes it; the runs view filters by status",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const { agent } = yield* toolAgent("gated", TestServer.Keys.a, "always")
        const browser = yield* Browser.open
        const parked = yield* Browser.on(browser, async (page) => {
          await signIn(page, api.url, TestServer.Keys.a)
          const threadId = await newThread(page, agent.id)
          await send(page, `/tool mcp__gated__echo {"text":"needs a yes"}`)
          await conversation(page).locator(":scope > header .status[data-status=\"waiting_for_approval\"]").waitFor()
          await page.reload()
          const status = conversation(page).locator(":scope > header .status")
          await status.and(page.locator("[data-status=\"waiting_for_approval\"]")).waitFor()
          const listed = threadItem(page, threadId).locator(".status")
          await listed.and(page.locator("[data-status=\"waiting_for_approval\"]")).waitFor()
          return {
            threadId,
            runId: await runIdOf(page),
            status: await status.textContent(),
            listed: await listed.textContent(),
            run: await runView(page).locator("header .status").textContent()
          }
        })
        yield* browser.screenshot("waiting-for-approval")
        assert.strictEqual((yield* getRun(parked.runId)).status, "waiting_for_approval")
        assert.deepStrictEqual([parked.status, parked.listed, parked.run], [
          "waiting for approval",
          "waiting for approval",
          "waiting for approval"
        ])
        yield* Browser.on(browser, async (page) => {
          await openView(page, "Inbox (1)")
          const card = page.getByRole("region", { name: "Inbox" }).getByRole("article", { name: "Approval request" })
          await card.getByRole("button", { name: "Approve" }).click()
          await card.getByRole("status").getByText("Approved. (resolved)").waitFor()
        })
        yield* browser.screenshot("inbox")
        const resumed = yield* Browser.on(browser, async (page) => {
          await page.goBack()
          return { outcome: await outcomeOf(page), nav: await page.getByRole("link", { name: /^Inbox/ }).textContent() }
        })
        yield* browser.screenshot("approval-resumed-from-inbox")
        assert.deepStrictEqual(resumed, { outcome: "Run completed.", nav: "Inbox" })
        assert.strictEqual((yield* getRun(parked.runId)).status, "completed")
        const runs = yield* Browser.on(browser, async (page) => {
          await openView(page, "Runs")
          const table = page.getByRole("table", { name: "Runs" })
          await page.getByLabel("Status").selectOption("completed")
          await table.locator(`[data-run-id="${parked.runId}"]`).waitFor()
          const completed = await table.locator("tbody tr").count()
          await page.getByLabel("Status").selectOption("failed")
          await table.getByText("No runs match.").waitFor()
          await page.getByLabel("Status").selectOption("completed")
          await table.locator(`[data-run-id="${parked.runId}"]`).waitFor()
          return { completed }
        })
        yield* browser.screenshot("runs")
        assert.isAtLeast(runs.completed, 1)
        assert.deepStrictEqual(browser.errors(), [])
      }).pipe(Effect.scoped),
    slow
  )

  it.effect(
    "the agent editor shows the envelope's field error next to its field, creates on a good definition, edits it, and deletes it after asking",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const key = TestServer.Keys.b
        const gate = yield* gateServer
        const server = yield* Collection.toolServers.create({ name: "gate", transport: "http", url: gate.url }, key)
        const browser = yield* Browser.open
        const refused = yield* Browser.on(browser, async (page) => {
          await signIn(page, api.url, key)
          await openView(page, "Agents")
          await page.getByRole("button", { name: "New agent" }).click()
          await page.getByLabel("Name", { exact: true }).fill("Ops bot")
          await page.getByLabel("Context block 1").fill("You run operations.")
          await page.getByRole("group", { name: "Tool servers (MCP)" }).getByLabel(`gate (${server.id})`).check()
          await page.getByLabel("Max steps (default)").fill("0")
          await page.getByRole("button", { name: "Create agent" }).click()
          const steps = page.getByLabel("Max steps (default)")
          await steps.and(page.locator("[aria-invalid=\"true\"]")).waitFor()
          const errorId = (await steps.getAttribute("aria-describedby"))?.split(" ")[0] ?? ""
          return { error: await page.locator(`[id="${errorId}"]`).textContent() }
        })
        yield* browser.screenshot("agent-editor")
        const refusal = yield* TestServer.expectError(
          yield* Collection.agents.post({ context: "x", policies: { maxStepsDefault: 0 } }, key),
          400,
          "invalid_request_error",
          "invalid_request_error"
        )
        assert.strictEqual(refused.error, (refusal.details?.["errors"] as Array<{ message: string }>)[0].message)
        const created = yield* Browser.on(browser, async (page) => {
          await page.getByLabel("Max steps (default)").fill("12")
          await page.getByRole("button", { name: "Create agent" }).click()
          const row = page.getByRole("table", { name: "Agents" }).getByRole("row").filter({ hasText: "Ops bot" })
          await row.waitFor()
          return row.getAttribute("data-agent-id")
        })
        yield* browser.screenshot("agents")
        const agent = yield* Collection.agents.read(created ?? "", key)
        assert.strictEqual(agent.metadata["name"], "Ops bot")
        assert.deepStrictEqual(agent.context, [{ content: "You run operations." }])
        assert.strictEqual(agent.policies.maxStepsDefault, 12)
        assert.deepStrictEqual(agent.capabilities, { mcp: { toolServerIds: [server.id] } })
        yield* Browser.on(browser, async (page) => {
          await page.getByRole("button", { name: "Edit Ops bot" }).click()
          await page.getByLabel("Band", { exact: true }).selectOption("lite")
          await page.getByLabel("Web search and fetch").check()
          await page.getByRole("button", { name: "Save changes" }).click()
          await page.getByRole("status").getByText("Saved Ops bot.").waitFor().catch(async (e) => {
            await page.screenshot({ path: "/tmp/cons/fail.png", fullPage: true })
            throw e
          })
        })
        const edited = yield* Collection.agents.read(agent.id, key)
        assert.strictEqual(edited.band, "lite")
        assert.deepStrictEqual(edited.capabilities, { web: true, mcp: { toolServerIds: [server.id] } })
        assert.strictEqual(edited.policies.maxStepsDefault, 12)
        assert.strictEqual(edited.configVersion, agent.configVersion + 1)
        const asked = yield* Browser.on(browser, async (page) => {
          await page.getByRole("button", { name: "Delete Ops bot" }).click()
          const dialog = page.getByRole("dialog")
          const question = await dialog.locator("p").textContent()
          await dialog.getByRole("button", { name: "Delete" }).click()
          await page.getByRole("table", { name: "Agents" }).getByRole("row").filter({ hasText: "Ops bot" }).waitFor({
            state: "detached"
          })
          return question
        })
        assert.strictEqual(asked, "Delete agent Ops bot? Its threads go with it.")
        yield* TestServer.expectError(yield* Collection.agents.get(agent.id, key), 404, "not_found", "agent_not_found")
        assert.deepStrictEqual(browser.errors(), [])
      }).pipe(Effect.scoped),
    slow
  )

  it.effect(
    "registrations: a secret is created write-only (its value never shown); a tool server is tested, and a refused one shows the service's message at its field",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const key = TestServer.Keys.c
        const gate = yield* gateServer
        yield* Collection.toolServers.create({ name: "gate", transport: "http", url: gate.url }, key)
        const browser = yield* Browser.open
        const secret = yield* Browser.on(browser, async (page) => {
          await signIn(page, api.url, key)
          await openView(page, "Secrets")
          await page.getByRole("button", { name: "New secret" }).click()
          await page.getByLabel("Name", { exact: true }).fill("db-password")
          await page.getByLabel("Value (write-only: never shown again)").fill("s3cr3t-value")
          await page.getByRole("button", { name: "Create", exact: true }).click()
          const row = page.getByRole("table", { name: "Secrets" }).getByRole("row").filter({ hasText: "db-password" })
          await row.waitFor()
          return { id: await row.getAttribute("data-id"), shown: (await page.content()).includes("s3cr3t-value") }
        })
        yield* browser.screenshot("secrets")
        assert.strictEqual((yield* Collection.secrets.read(secret.id ?? "", key)).name, "db-password")
        assert.isFalse(secret.shown)
        const tools = yield* Browser.on(browser, async (page) => {
          await openView(page, "Tool servers")
          await page.getByRole("button", { name: "Test gate" }).click()
          const tested = await page.getByRole("status").filter({ hasText: "Test gate:" }).textContent()
          await page.getByRole("button", { name: "New tool server" }).click()
          await page.getByLabel("Name", { exact: true }).fill("bad__name")
          await page.getByLabel("URL", { exact: true }).fill(gate.url)
          await page.getByRole("button", { name: "Create", exact: true }).click()
          const name = page.getByLabel("Name", { exact: true })
          await name.and(page.locator("[aria-invalid=\"true\"]")).waitFor()
          const errorId = (await name.getAttribute("aria-describedby"))?.split(" ")[0] ?? ""
          return {
            tested,
            error: await page.locator(`[id="${errorId}"]`).textContent(),
            invalid: await page.locator("[aria-invalid=\"true\"]").count()
          }
        })
        yield* browser.screenshot("tool-servers")
        // Only the name is refused: a required choice left as it was (Transport) is sent as its first option.
        assert.strictEqual(tools.invalid, 1)
        assert.include(tools.tested, "connected: true · latencyMs: ")
        assert.include(tools.tested, "toolCount: 3 · tools: mcp__gate__echo, mcp__gate__fail, mcp__gate__wait")
        assert.strictEqual(
          tools.error,
          "name must be 1 to 56 letters, digits, '_' or '-', without the reserved separator '__'"
        )
        for (const view of ["HTTP connections", "Approval hooks", "Result handlers"]) {
          yield* Browser.on(browser, (page) => openView(page, view))
          yield* browser.screenshot(view.toLowerCase().replaceAll(" ", "-"))
        }
        assert.deepStrictEqual(browser.errors(), [])
      }).pipe(Effect.scoped),
    slow
  )
})
