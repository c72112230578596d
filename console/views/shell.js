/**
 * The signed-in console: a navigation bar (links, so the keyboard, the back
 * button and new tabs work) and one view at a time, chosen by the URL's hash:
 * `#/threads` (agents, threads, the conversation and the inbox side by side;
 * `#/threads/<id>` opens one), `#/agents`, `#/runs`, `#/inbox`, and the
 * registrations (`#/tool-servers`, `#/http-connections`, `#/secrets`,
 * `#/hooks`, `#/result-handlers`).
 */
import { h, replace } from "../dom.js"
import { AgentsView } from "./agents.js"
import { Inbox } from "./inbox.js"
import { ResourceView } from "./resources.js"
import { resourceSpecs } from "./resourceSpecs.js"
import { RunsView } from "./runs.js"
import { ThreadPanel } from "./thread.js"
import { ThreadList } from "./threadList.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {{ element: HTMLElement, show: () => Promise<unknown> }} View */

/** How often the inbox looks for new interactions on its own (it also does when a run parks). */
const inboxEveryMs = 15_000

/**
 * @param {Api} api
 * @param {HTMLElement} header the top bar (title, who is signed in, Sign out)
 * @returns {{ element: HTMLElement, stop: () => void }}
 */
export const shell = (api, header) => {
  const inboxLink = h("a", { attrs: { href: "#/inbox" } }, "Inbox")
  const inbox = new Inbox(api, (pending) => replace(inboxLink, pending === 0 ? "Inbox" : `Inbox (${pending})`))
  const list = new ThreadList(api, (thread, agent) => {
    if (location.hash !== `#/threads/${thread.id}`) history.replaceState(null, "", `#/threads/${thread.id}`)
    void conversation.show(thread, agent)
  })
  const conversation = new ThreadPanel(api, {
    onInputRequested: () => void inbox.refresh(),
    onChanged: () => void list.loadThreads(),
    onNamed: (threadId, name) => list.named(threadId, name)
  })
  const side = h("div", { class: "side" })
  const panes = h("div", { class: "panes" }, list.element, conversation.element, side)
  const full = h("div", { class: "full" })
  /** @type {Array<[string, View]>} */
  const named = [
    ["agents", new AgentsView(api, () => void list.load())],
    ["runs", new RunsView(api)],
    ...resourceSpecs.map((spec) => /** @type {[string, View]} */ ([spec.slug, new ResourceView(api, spec)]))
  ]
  const views = new Map(named)
  const links = [
    ["threads", "Conversations"],
    ["agents", "Agents"],
    ["runs", "Runs"],
    ["inbox", ""],
    ...resourceSpecs.map((spec) => [spec.slug, spec.title])
  ].map(([name, text]) => (name === "inbox" ? inboxLink : h("a", { attrs: { href: `#/${name}` } }, text)))
  const nav = h(
    "nav",
    { class: "tabs", attrs: { "aria-label": "Console" } },
    h("ul", {}, links.map((a) => h("li", {}, a)))
  )
  const main = h("main", { attrs: { id: "view", tabindex: "-1" } })

  const route = async () => {
    const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?")
    const [name = "threads", id] = path.split("/")
    for (const a of links) {
      if (a.getAttribute("href") === `#/${name === "" ? "threads" : name}`) a.setAttribute("aria-current", "page")
      else a.removeAttribute("aria-current")
    }
    const view = views.get(name)
    if (view !== undefined) {
      replace(main, full)
      replace(full, view.element)
      return view.show()
    }
    if (name === "inbox") {
      replace(main, full)
      replace(full, inbox.element)
      return inbox.refresh()
    }
    replace(main, panes)
    side.append(inbox.element)
    const agentId = new URLSearchParams(query).get("agent") ?? undefined
    if (id === undefined) return list.load(agentId)
    const thread = await api.thread(id).catch(() => undefined)
    if (thread === undefined) return list.load(agentId)
    list.threadId = thread.id
    await list.load(thread.agentId)
    const agent = list.agent
    if (agent !== undefined && conversation.thread?.id !== thread.id) await conversation.show(thread, agent)
  }
  // After following a link, focus goes to the view (its heading is read first), not back to the top.
  const onHash = () => void route().finally(() => main.focus({ preventScroll: true }))
  window.addEventListener("hashchange", onHash)
  const timer = setInterval(() => void inbox.refresh(), inboxEveryMs)
  void route()
  void inbox.refresh()
  return {
    element: h("div", { class: "shell" }, header, nav, main),
    stop: () => {
      clearInterval(timer)
      window.removeEventListener("hashchange", onHash)
      conversation.following?.abort()
    }
  }
}
