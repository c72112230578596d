/**
 * The console (`/console`) in a real headless Chromium against the real
 * service: signing in (and a refused key), a thread started and a message
 * sent with its answer streamed (reasoning, text shown as text, usage, the
 * terminal state), a tool call's input and output shown live while the run
 * is still going, a stream cut by the network resumed with Last-Event-ID;
 * and how the files are served (Content-Security-Policy, unknown files).
 * Screenshots go to test-artifacts/console/.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { contentSecurityPolicy } from "../../http/ConsoleRoute.ts"
import * as Browser from "../support/Browser.ts"
import * as Collection from "../support/Collection.ts"
import {
  newThread,
  outcomeOf,
  runIdOf,
  runView,
  send,
  signIn,
  storageKey,
  textsOf,
  toolCard,
  usageOf
} from "../support/ConsolePage.ts"
import { getRun, streamOf } from "../support/Conversation.ts"
import { cutProxy } from "../support/CutProxy.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

/** Text a model might write that is markup if a page ever parsed it. */
const hostile = `<img src=x onerror="document.title='pwned'"> & <b>bold</b>`

const pretty = (value: unknown) => JSON.stringify(value, null, 2)

/** The outputs of a replayed stream's tool calls, by call id. */
const outputsById = (chunks: ReadonlyArray<{ readonly type: string }>) =>
  new Map(
    chunks.flatMap((c) => (c.type === "tool-output-available" && "toolCallId" in c && "output" in c
      ? [[String(c.toolCallId), c.output] as const]
      : [])
    )
  )

/** An agent calling the tools of a gate MCP server registered as `name`. */
const toolAgent = (name: string) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url })
    const agent = yield* Collection.agents.create({ capabilities: { mcp: { toolServerIds: [server.id] } } })
    return { gate, agent }
  })

TestServer.suite()("console", (it) => {
  it.effect("signs in, starts a thread and streams the answer: reasoning, text shown as text (never markup), usage, terminal state", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* Collection.agents.create({
        context: "You are the console's test agent.",
        metadata: { name: "Console tester" }
      })
      const browser = yield* Browser.open
      const seen = yield* Browser.on(browser, async (page) => {
        await signIn(page, api.url, TestServer.Keys.a)
        const stored = await page.evaluate(`sessionStorage.getItem("${storageKey}")`)
        const agentLabel = await page.locator(`[data-agent-id="${agent.id}"] .name`).textContent()
        const threadId = await newThread(page, agent.id)
        await send(page, `/reason Weighing ${hostile}\n/text Hello ${hostile}`, { reasoning: true })
        const runId = await runIdOf(page)
        const outcome = await outcomeOf(page)
        return {
          stored,
          agentLabel,
          threadId,
          runId,
          outcome,
          texts: await textsOf(page),
          reasoning: await page.locator(".run .reasoning p").allTextContents(),
          usage: await usageOf(page),
          images: await page.locator("img, b").count(),
          title: await page.title(),
          listed: await runView(page).locator("header .status").textContent()
        }
      })
      yield* browser.screenshot("streamed-answer")
      assert.strictEqual(seen.stored, TestServer.Keys.a)
      assert.strictEqual(seen.agentLabel, "Console tester")
      assert.match(seen.threadId, /^thread_/)
      assert.strictEqual(seen.outcome, "Run completed.")
      assert.deepStrictEqual(seen.texts, [`Hello ${hostile}`])
      assert.deepStrictEqual(seen.reasoning, [`Weighing ${hostile}`])
      // Shown as written: no element came out of the model's text, no handler ran.
      assert.strictEqual(seen.images, 0)
      assert.strictEqual(seen.title, "Agent service console")
      const run = yield* getRun(seen.runId)
      assert.strictEqual(run.threadId, seen.threadId)
      assert.strictEqual(run.status, "completed")
      const usage = run.usage
      assert.isDefined(usage)
      assert.deepStrictEqual(seen.usage, {
        "Input tokens": String(usage?.inputTokens),
        "Output tokens": String(usage?.outputTokens),
        "Total tokens": String(usage?.totalTokens),
        "Cost (US cents)": String(usage?.costCents),
        Steps: String(usage?.steps)
      })
      assert.strictEqual(seen.listed, "completed")
      assert.deepStrictEqual(browser.errors(), [])
    }).pipe(Effect.scoped))

  it.effect("a refused key shows the service's message and is not kept", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const refused = yield* TestServer.expectError(
        yield* TestServer.request("GET", "/v1/agents?limit=100", { key: "sk_not_a_key" }),
        401,
        "authentication_error",
        "invalid_api_key"
      )
      const browser = yield* Browser.open
      const seen = yield* Browser.on(browser, async (page) => {
        await page.goto(`${api.url}/console`)
        await page.getByLabel("API key").fill("sk_not_a_key")
        await page.getByRole("button", { name: "Sign in" }).click()
        const alert = page.getByRole("alert").filter({ hasText: /./ })
        await alert.waitFor()
        return {
          alert: await alert.textContent(),
          stored: await page.evaluate(`sessionStorage.getItem("${storageKey}")`),
          signOut: await page.getByRole("button", { name: "Sign out" }).count()
        }
      })
      yield* browser.screenshot("refused-key")
      assert.strictEqual(seen.alert, refused.message)
      assert.isNull(seen.stored)
      assert.strictEqual(seen.signOut, 0)
      assert.deepStrictEqual(browser.errors(), [])
    }).pipe(Effect.scoped))

  it.effect(
    "tool calls show their input and output (or their failure) as they happen; a message sent meanwhile is held, said so, and answered",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const { gate, agent } = yield* toolAgent("tools")
        const browser = yield* Browser.open
        const runId = yield* Browser.on(browser, async (page) => {
          await signIn(page, api.url, TestServer.Keys.a)
          await newThread(page, agent.id)
          await send(
            page,
            `/tool mcp__tools__echo ${
              JSON.stringify({ text: hostile })
            }\n/tool mcp__tools__fail {}\n/tool mcp__tools__wait {}`
          )
          await toolCard(page, "mcp__tools__wait").and(page.locator("[data-state=\"running\"]")).waitFor()
          return runIdOf(page)
        })
        // The run is blocked in `wait`: what the page shows now, it showed live.
        yield* gate.waiting
        assert.strictEqual((yield* getRun(runId)).status, "running")
        const live = yield* Browser.on(browser, async (page) => ({
          echoState: await toolCard(page, "mcp__tools__echo").getAttribute("data-state"),
          echoInput: await toolCard(page, "mcp__tools__echo").getByLabel("Input").textContent(),
          echoOutput: await toolCard(page, "mcp__tools__echo").getByLabel("Output").textContent(),
          waitInput: await toolCard(page, "mcp__tools__wait").getByLabel("Input").textContent(),
          failState: await toolCard(page, "mcp__tools__fail").getAttribute("data-state"),
          failError: await toolCard(page, "mcp__tools__fail").locator(".tool-error").textContent(),
          outcomes: await page.locator(".terminal .outcome").count()
        }))
        yield* browser.screenshot("tool-running")
        // A message now is held for the run's next turn boundary (409 thread_busy): the page says so and keeps following the run.
        const held = yield* Browser.on(browser, async (page) => {
          await send(page, "hold this")
          const alert = page.getByRole("region", { name: "Conversation" }).getByRole("alert").filter({ hasText: /./ })
          await alert.waitFor()
          return alert.textContent()
        })
        assert.strictEqual(
          held,
          "Another run is active on this thread; the message was held and will be delivered at its next turn boundary. Do not re-send it."
        )
        assert.deepStrictEqual((yield* getRun(runId)).queuedFollowups?.map((f) => f.text), ["hold this"])
        yield* gate.open
        const done = yield* Browser.on(browser, async (page) => ({
          outcome: await outcomeOf(page),
          texts: await textsOf(page),
          notices: await page.locator(".run .notice").allTextContents(),
          waitOutput: await toolCard(page, "mcp__tools__wait").getByLabel("Output").textContent()
        }))
        yield* browser.screenshot("tool-done")
        const replay = yield* streamOf(runId)
        const outputs = [...outputsById(replay.chunks).values()]
        assert.strictEqual(live.echoState, "done")
        assert.strictEqual(live.echoInput, pretty({ text: hostile }))
        assert.strictEqual(live.echoOutput, pretty(outputs[0]))
        assert.strictEqual(live.waitInput, pretty({}))
        // An expected failure (tool-output-available, output.type 'tool-output-error') is shown as the call's error.
        assert.strictEqual(live.failState, "failed")
        assert.strictEqual(live.failError, "tool_error: it failed")
        assert.strictEqual(live.outcomes, 0)
        assert.strictEqual(done.outcome, "Run completed.")
        // Delivered at the boundary after `wait`, the follow-up is the message the model answers.
        assert.deepStrictEqual(done.notices, ["Follow-up delivered: hold this"])
        assert.deepStrictEqual(done.texts, ["Echo: hold this"])
        assert.strictEqual(done.waitOutput, pretty(outputs[2]))
        assert.deepStrictEqual(browser.errors(), [])
        // Three tool calls, a held message and its answer through the page: past 30 s when CI's cores are busy.
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect(
    "a stream the network cuts mid-run is resumed with Last-Event-ID: nothing lost, nothing twice",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const { gate, agent } = yield* toolAgent("flaky")
        const proxy = yield* cutProxy(api.url)
        const browser = yield* Browser.open
        const runId = yield* Browser.on(browser, async (page) => {
          await signIn(page, proxy.url, TestServer.Keys.a)
          await newThread(page, agent.id)
          await send(
            page,
            "/tool mcp__flaky__echo {\"text\":\"before\"}\n/tool mcp__flaky__wait {}\n/text After the cut."
          )
          await toolCard(page, "mcp__flaky__wait").and(page.locator("[data-state=\"running\"]")).waitFor()
          return runIdOf(page)
        })
        yield* gate.waiting
        const before = proxy.requests().length
        yield* proxy.cut
        // The page asks again at once, after the last frame it read.
        yield* proxy.received(before + 1)
        const request = proxy.requests()[before]
        yield* gate.open
        const seen = yield* Browser.on(browser, async (page) => ({
          outcome: await outcomeOf(page),
          texts: await textsOf(page),
          cards: await page.locator(".run article.tool").count(),
          steps: await page.locator(".run section.step").count()
        }))
        yield* browser.screenshot("resumed-after-cut")
        const replay = yield* streamOf(runId)
        assert.strictEqual(request.method, "GET")
        assert.strictEqual(request.path, `/v1/runs/${runId}/stream`)
        // What came after the last frame it had: one the service sent before the cut.
        const lastEventId = Number(request.lastEventId)
        assert.isTrue(
          Number.isInteger(lastEventId) && lastEventId > 0 && lastEventId < replay.ids.length,
          String(request.lastEventId)
        )
        assert.strictEqual(seen.outcome, "Run completed.")
        assert.deepStrictEqual(seen.texts, ["After the cut."])
        assert.strictEqual(seen.cards, 2)
        assert.strictEqual(seen.steps, replay.chunks.filter((c) => c.type === "start-step").length)
        assert.deepStrictEqual(browser.errors(), [])
        // Two tool calls, a cut and a resumed stream through the page: 28 s alone on a loaded machine.
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect("Cancel run cancels the run in view: the stream ends with abort and the terminal state says cancelled", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { gate, agent } = yield* toolAgent("stoppable")
      const browser = yield* Browser.open
      yield* Browser.on(browser, async (page) => {
        await signIn(page, api.url, TestServer.Keys.a)
        await newThread(page, agent.id)
        await send(page, "/tool mcp__stoppable__wait {}")
        await toolCard(page, "mcp__stoppable__wait").and(page.locator("[data-state=\"running\"]")).waitFor()
      })
      yield* gate.waiting
      const seen = yield* Browser.on(browser, async (page) => {
        await page.getByRole("button", { name: "Cancel run" }).click()
        return {
          runId: await runIdOf(page),
          outcome: await outcomeOf(page),
          cancelButtons: await page.getByRole("button", { name: "Cancel run" }).count()
        }
      })
      yield* browser.screenshot("run-cancelled")
      const run = yield* getRun(seen.runId)
      assert.strictEqual(run.status, "cancelled")
      assert.strictEqual(seen.outcome, "Run cancelled.")
      assert.strictEqual(seen.cancelButtons, 0)
      assert.deepStrictEqual((yield* streamOf(seen.runId)).chunks.at(-1), { type: "abort", reason: "cancelled" })
      assert.deepStrictEqual(browser.errors(), [])
    }).pipe(Effect.scoped))

  it.effect("the files are served with a strict Content-Security-Policy; unknown files and other methods get the envelope", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      for (
        const [path, type] of [["/console", "text/html"], ["/console/", "text/html"], [
          "/console/main.js",
          "text/javascript"
        ], ["/console/console.css", "text/css"]] as const
      ) {
        const reply = yield* TestServer.request("GET", path, { key: null })
        assert.strictEqual(reply.status, 200, path)
        assert.strictEqual(reply.headers.get("content-type"), `${type}; charset=utf-8`, path)
        assert.strictEqual(reply.headers.get("content-security-policy"), contentSecurityPolicy, path)
        assert.strictEqual(reply.headers.get("x-content-type-options"), "nosniff", path)
      }
      assert.include(contentSecurityPolicy, "script-src 'self'")
      for (
        const path of [
          "/console/nope.js",
          "/console/tsconfig.json",
          "/console/%2e%2e%2fpackage.json",
          "/console/..%2fhttp%2fServer.ts"
        ]
      ) {
        yield* TestServer.expectError(
          yield* TestServer.request("GET", path, { key: null }),
          404,
          "not_found",
          "route_not_found"
        )
      }
      const post = yield* TestServer.request("POST", "/console", { key: null })
      yield* TestServer.expectError(post, 405, "invalid_request_error", "method_not_allowed")
      assert.strictEqual(post.headers.get("allow"), "GET")
      // The policy holds in the browser: HTML strings cannot reach a DOM sink (Trusted Types).
      const browser = yield* Browser.open
      const sink = yield* Browser.on(browser, async (page) => {
        await page.goto(`${api.url}/console`)
        await page.getByLabel("API key").waitFor()
        return page.evaluate(
          `(() => { try { document.body.innerHTML = "<b>x</b>"; return "allowed" } catch (e) { return e.name } })()`
        )
      })
      assert.strictEqual(sink, "TypeError")
    }).pipe(Effect.scoped))
})
