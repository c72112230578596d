/**
 * The conversations' side pane: the workspace's agents by name, the chosen
 * agent's threads named by metadata or their first message, each with its
 * state as a person needs it (a thread whose run waits on an approval says
 * "waiting for approval", not "idle"), and New thread.
 */
import { h, link, messageOf, replace, time } from "../dom.js"
import { agentName, threadName } from "../names.js"
import { statusBadge } from "./runView.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("../api.js").Agent} Agent */
/** @typedef {import("../api.js").Thread} Thread */
/** @typedef {import("../api.js").Run} Run */

const active = ["queued", "preparing", "running", "waiting_for_approval", "waiting_for_input"]

export class ThreadList {
  /**
   * @param {Api} api
   * @param {(thread: Thread, agent: Agent) => void} onThread
   */
  constructor(api, onThread) {
    this.api = api
    this.onThread = onThread
    /** @type {Agent | undefined} */
    this.agent = undefined
    /** @type {string | undefined} the thread in view */
    this.threadId = undefined
    /** @type {Map<string, string>} names from first messages already read (by the conversation or this list) */
    this.names = new Map()
    this.agentList = h("ul", { class: "list", attrs: { "aria-label": "Agents" } })
    this.threadList = h("ul", { class: "list", attrs: { "aria-label": "Threads" } })
    this.error = h("p", { class: "error", attrs: { role: "alert", hidden: "" } })
    this.newThread = h("button", {
      attrs: { type: "button", disabled: "" },
      on: { click: () => void this.startThread() }
    }, "New thread")
    this.threadsTitle = h("h2", {}, "Threads")
    this.element = h(
      "nav",
      { class: "agents", attrs: { "aria-label": "Agents and threads" } },
      h("header", {}, h("h2", {}, "Agents"), link("#/agents", "Manage")),
      this.agentList,
      h("header", {}, this.threadsTitle, this.newThread),
      this.threadList,
      this.error
    )
  }

  /** @param {unknown} error */
  fail(error) {
    this.error.textContent = messageOf(error)
    this.error.hidden = false
  }

  /**
   * Lists the agents (and selects `selectId`, or keeps the current one, or the first).
   * @param {string} [selectId]
   */
  async load(selectId = this.agent?.id) {
    try {
      const page = await this.api.agents()
      this.error.hidden = true
      replace(
        this.agentList,
        page.data.length === 0
          ? h("li", { class: "empty" }, "No agents yet: ", link("#/agents", "create one"), ".")
          : page.data.map((agent) =>
            h(
              "li",
              {},
              h(
                "button",
                {
                  class: "item",
                  attrs: { type: "button", "data-agent-id": agent.id, "aria-pressed": "false" },
                  on: { click: () => void this.select(agent) }
                },
                h("span", { class: "name" }, agentName(agent)),
                h("span", { class: "band" }, agent.band)
              )
            )
          )
      )
      const selected = page.data.find((agent) => agent.id === selectId) ?? page.data[0]
      if (selected !== undefined) await this.select(selected)
      return page.data
    } catch (error) {
      this.fail(error)
      return []
    }
  }

  /** @param {Agent} agent */
  async select(agent) {
    this.agent = agent
    for (const button of this.agentList.querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(button.dataset["agentId"] === agent.id))
    }
    this.threadsTitle.textContent = `Threads of ${agentName(agent)}`
    this.newThread.disabled = false
    await this.loadThreads()
  }

  /** Lists the chosen agent's threads with their names and states. */
  async loadThreads() {
    const agent = this.agent
    if (agent === undefined) return
    try {
      const [page, runs] = await Promise.all([
        this.api.threads(agent.id),
        this.api.runs({ agentId: agent.id, limit: 100 })
      ])
      /** @type {Map<string, Run>} the newest run of each thread */
      const newest = new Map()
      for (const run of runs.data) if (!newest.has(run.threadId)) newest.set(run.threadId, run)
      const firsts = await Promise.all(
        page.data.map((thread) =>
          thread.metadata["name"] !== undefined || this.names.has(thread.id)
            ? undefined
            : this.api.messages(thread.id, { limit: 1 }).then((p) => p.data[0], () => undefined)
        )
      )
      if (this.agent !== agent) return
      replace(
        this.threadList,
        page.data.length === 0 ? h("li", { class: "empty" }, "No threads yet.") : page.data.map((thread, i) => {
          const run = newest.get(thread.id)
          const status = run !== undefined && active.includes(run.status) ? run.status : thread.status
          return h(
            "li",
            {},
            h(
              "button",
              {
                class: "item",
                attrs: {
                  type: "button",
                  "data-thread-id": thread.id,
                  "aria-pressed": String(thread.id === this.threadId)
                },
                on: { click: () => this.open(thread, agent) }
              },
              h("span", { class: "name" }, this.names.get(thread.id) ?? threadName(thread, firsts[i])),
              statusBadge(status),
              time(thread.updatedAt)
            )
          )
        })
      )
    } catch (error) {
      this.fail(error)
    }
  }

  /**
   * A thread's name as the conversation learned it (its first message), shown at once and kept.
   * @param {string} threadId
   * @param {string} name
   */
  named(threadId, name) {
    this.names.set(threadId, name)
    const shown = this.threadList.querySelector(`[data-thread-id="${CSS.escape(threadId)}"] .name`)
    if (shown !== null) shown.textContent = name
  }

  /**
   * @param {Thread} thread
   * @param {Agent} agent
   */
  open(thread, agent) {
    this.threadId = thread.id
    for (const button of this.threadList.querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(button.dataset["threadId"] === thread.id))
    }
    this.onThread(thread, agent)
  }

  async startThread() {
    const agent = this.agent
    if (agent === undefined) return
    try {
      const thread = await this.api.createThread(agent.id)
      this.threadId = thread.id
      await this.loadThreads()
      this.open(thread, agent)
    } catch (error) {
      this.fail(error)
    }
  }
}
