/**
 * What a person does in the console (`/console`), as Playwright steps: sign
 * in, pick an agent and start a thread, send a message, wait for the run's
 * end; and where the run view shows things. Every wait is a condition on the
 * page (Playwright's auto-waiting locators), never a fixed delay.
 */
import type { Locator, Page } from "playwright-core"

/** Where the console keeps the key (sessionStorage). */
export const storageKey = "svc-console-api-key"

/** Opens the console at `origin` and signs in with `key` (the sign-out button shows that it worked). */
export const signIn = async (page: Page, origin: string, key: string) => {
  await page.goto(`${origin}/console`)
  await page.getByLabel("API key").fill(key)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("button", { name: "Sign out" }).waitFor()
}

/** Chooses the agent and starts a thread on it; answers the thread's id as the page shows it. */
export const newThread = async (page: Page, agentId: string): Promise<string> => {
  await page.getByRole("navigation", { name: "Agents and threads" }).locator(`[data-agent-id="${agentId}"]`).click()
  await page.getByRole("button", { name: "New thread" }).click()
  const id = page.getByRole("region", { name: "Conversation" }).locator(":scope > header code")
  await id.waitFor()
  return (await id.textContent()) ?? ""
}

/** Opens a view of the console by its link in the navigation bar. */
export const openView = async (page: Page, name: string) => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name }).click()
}

/** Writes `text` in the composer and sends it. */
export const send = async (page: Page, text: string, options: { readonly reasoning?: boolean } = {}) => {
  await page.getByLabel("Message").fill(text)
  if (options.reasoning === true) await page.getByLabel("Stream reasoning").check()
  await page.getByRole("button", { name: "Send" }).click()
}

/** The conversation's newest turn (its run). */
export const runView = (page: Page): Locator => page.getByRole("region", { name: "Run", exact: true }).last()

/** Every turn of the conversation on screen, oldest first. */
export const turns = (page: Page): Locator => page.getByRole("region", { name: "Run", exact: true })

/** The id of the run on screen, once it has one. */
export const runIdOf = async (page: Page): Promise<string> => (await runView(page).getAttribute("data-run-id")) ?? ""

/** The card of the run view's call of `toolName`. */
export const toolCard = (page: Page, toolName: string): Locator =>
  runView(page).getByRole("article", { name: `Tool call ${toolName}` })

/** Waits for the run's terminal state and answers its sentence ("Run completed."). */
export const outcomeOf = async (page: Page): Promise<string> => {
  const outcome = runView(page).locator(".terminal .outcome")
  await outcome.waitFor()
  return (await outcome.textContent()) ?? ""
}

/** The texts of the run view's answer parts, in order. */
export const textsOf = (page: Page): Promise<Array<string>> => runView(page).locator("p.text").allTextContents()

/** The usage the run view shows: term -> value. */
export const usageOf = async (page: Page): Promise<Record<string, string>> => {
  const rows = runView(page).getByRole("definition")
  const terms = await runView(page).getByRole("term").allTextContents()
  const values = await rows.allTextContents()
  return Object.fromEntries(terms.map((term, i) => [term, values[i]]))
}
