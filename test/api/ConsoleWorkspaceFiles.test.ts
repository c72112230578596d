/**
 * A thread's workspace files in the console (issue 27), in a real headless
 * Chromium against the real service and sandbox: after the agent wrote files
 * in its managed workspace, the thread's "Files and previews" panel lists the
 * workspace's root; a folder opens from the keyboard, the path bar leads back,
 * a file the agent wrote is previewed with the artifacts' preview, and
 * "Refresh files" shows what a later run wrote. The screenshot
 * `workspace-files.png` goes to test-artifacts/console/.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as Browser from "../support/Browser.ts"
import { signIn } from "../support/ConsolePage.ts"
import { agentWithThread, outputsOf, send, toolStep } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

const slow = 60_000

TestServer.suite()("console: a thread's workspace files", (it) => {
  it.effect(
    "lists the workspace, opens a folder from the keyboard, goes back up and previews a file the agent wrote",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const { thread } = yield* agentWithThread(
          { workspace: { type: "managed", network: { mode: "offline" } }, metadata: { name: "Report writer" } },
          { metadata: { name: "Quarterly report" } }
        )
        const { parsed } = yield* send(
          thread.id,
          [
            toolStep("write_file", { path: "reports/summary.md", content: "# Summary\n\nTotal: 42\n" }),
            toolStep("write_file", { path: "data.csv", content: "a,b\n1,2\n" })
          ].join("\n")
        )
        assert.deepStrictEqual(outputsOf(parsed.chunks), [
          { path: "reports/summary.md", bytes: 21 },
          { path: "data.csv", bytes: 8 }
        ])
        const browser = yield* Browser.open
        const seen = yield* Browser.on(browser, async (page) => {
          await signIn(page, api.url, TestServer.Keys.a)
          await page.goto(`${api.url}/console#/threads/${thread.id}`)
          const panel = page.getByRole("region", { name: "Conversation" }).locator(".files-panel")
          await panel.locator("summary").click()
          const files = panel.getByRole("list", { name: "Workspace files" })
          await files.locator("[data-path=\"reports\"]").waitFor()
          const root = await files.locator(":scope > li").evaluateAll((items) =>
            items.map((li) => li.getAttribute("data-path"))
          )
          // The folder opens from the keyboard; focus moves to its listing.
          await files.getByRole("button", { name: "Open folder reports" }).focus()
          await page.keyboard.press("Enter")
          await files.locator("[data-path=\"reports/summary.md\"]").waitFor()
          const focused = await page.locator(":focus").getAttribute("aria-label")
          const crumbs = await panel.getByRole("navigation", { name: "Workspace folder" }).textContent()
          await files.getByRole("button", { name: "Preview summary.md" }).click()
          const preview = panel.locator(".preview pre")
          await preview.waitFor()
          const previewed = await preview.textContent()
          return { root, focused, crumbs, previewed }
        })
        yield* browser.screenshot("workspace-files")
        const back = yield* Browser.on(browser, async (page) => {
          const panel = page.locator(".files-panel")
          await panel.getByRole("navigation", { name: "Workspace folder" }).getByRole("button", { name: "workspace" })
            .click()
          await panel.getByRole("list", { name: "Workspace files" }).locator("[data-path=\"data.csv\"]").waitFor()
          return panel.getByRole("list", { name: "Workspace files" }).locator(":scope > li").count()
        })
        // A later run writes a file: "Refresh files" shows it.
        yield* send(thread.id, toolStep("write_file", { path: "later.txt", content: "later\n" }))
        const refreshed = yield* Browser.on(browser, async (page) => {
          const panel = page.locator(".files-panel")
          await panel.getByRole("button", { name: "Refresh files" }).click()
          const files = panel.getByRole("list", { name: "Workspace files" })
          await files.locator("[data-path=\"later.txt\"]").waitFor()
          return files.locator(":scope > li").evaluateAll((items) => items.map((li) => li.getAttribute("data-path")))
        })
        assert.deepStrictEqual(refreshed, ["data.csv", "later.txt", "reports"])
        assert.deepStrictEqual(seen, {
          root: ["data.csv", "reports"],
          focused: "Workspace files",
          crumbs: "workspace / reports",
          previewed: "# Summary\n\nTotal: 42\n"
        })
        assert.strictEqual(back, 2)
        assert.deepStrictEqual(browser.errors(), [])
      }),
    slow
  )
})
