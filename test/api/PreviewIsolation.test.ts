/**
 * A page a workspace wrote, opened in the console's own tab through its
 * preview URL, in a real Chromium: it runs on the previews' origin, so it
 * reads nothing the console keeps (the key in sessionStorage, anything in
 * localStorage), and the console still holds its key when the reader comes
 * back to it.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as Browser from "../support/Browser.ts"
import { signIn, storageKey } from "../support/ConsolePage.ts"
import { agentWithThread, getThread, send, toolStep } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

/** What the previewed page reports, in its title, of the storage its origin gives it. */
const snooper = [
  "<!doctype html><title>loading</title><script>",
  `const seen = { key: sessionStorage.getItem(${JSON.stringify(storageKey)}), probe: localStorage.getItem("probe"),`,
  "  session: sessionStorage.length, local: localStorage.length, origin: location.origin }",
  "document.title = 'seen ' + JSON.stringify(seen)",
  "</script>"
].join("\n")

TestServer.suite()("previews in a browser", (it) => {
  it.effect("a previewed page opened in the console's tab reads none of the console's storage; the console keeps its key", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread({
        workspace: {
          type: "managed",
          network: { mode: "offline" },
          services: [{ name: "site", command: "python3 -m http.server 8040 --bind 127.0.0.1", port: 8040 }],
          previews: { enabled: true }
        }
      })
      yield* send(thread.id, toolStep("write_file", { path: "index.html", content: snooper }))
      const preview = (yield* getThread(thread.id)).workspace?.previews?.[0]
      assert.strictEqual(preview?.port, 8040)
      // Its URL names svc.test (SVC_PUBLIC_URL's host): the browser reaches the same port on 127.0.0.1.
      const url = new URL(preview?.url ?? "")
      url.hostname = "127.0.0.1"
      assert.notStrictEqual(url.origin, new URL(api.url).origin)

      const browser = yield* Browser.open
      const seen = yield* Browser.on(browser, async (page) => {
        await signIn(page, api.url, TestServer.Keys.a)
        await page.evaluate(`localStorage.setItem("probe", "the console's")`)
        const before = await page.evaluate(`sessionStorage.getItem("${storageKey}")`)
        await page.goto(url.href)
        await page.waitForFunction(`document.title.startsWith("seen ")`)
        const title = await page.title()
        await page.goBack()
        await page.getByRole("button", { name: "Sign out" }).waitFor()
        const after = await page.evaluate(`sessionStorage.getItem("${storageKey}")`)
        return { before, title, after }
      })
      yield* browser.screenshot("preview-origin")
      assert.strictEqual(seen.before, TestServer.Keys.a)
      assert.strictEqual(
        seen.title,
        `seen ${JSON.stringify({ key: null, probe: null, session: 0, local: 0, origin: url.origin })}`
      )
      assert.strictEqual(seen.after, TestServer.Keys.a)
      assert.deepStrictEqual(browser.errors(), [])
    }))
})
