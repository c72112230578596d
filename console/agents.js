/**
 * Agents and their threads: the workspace's agents (a small form creates
 * one), the threads of the chosen agent, and a button that starts a thread.
 * Choosing a thread hands it to the conversation panel.
 */
import { field, h, messageOf, replace, time } from "./dom.js"
import { statusBadge } from "./runView.js"

/** @typedef {import("./api.js").Api} Api */
/** @typedef {import("./api.js").Agent} Agent */
/** @typedef {import("./api.js").Thread} Thread */

/**
 * What to call an agent: its metadata `name`, else the first line of its context, else its id.
 * @param {Agent} agent
 */
export const agentName = (agent) => {
  const named = agent.metadata["name"]
  if (named !== undefined && named !== "") return named
  const first = agent.context[0]?.content.split("\n")[0]?.trim() ?? ""
  return first === "" ? agent.id : first.length > 60 ? `${first.slice(0, 59)}…` : first
}

export class AgentsPanel {
  /**
   * @param {Api} api
   * @param {(thread: Thread, agent: Agent) => void} onThread
   */
  constructor(api, onThread) {
    this.api = api
    this.onThread = onThread
    /** @type {Agent | undefined} */
    this.agent = undefined
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
      h(
        "header",
        {},
        h("h2", {}, "Agents"),
        h("button", { attrs: { type: "button" }, on: { click: () => void this.load() } }, "Refresh")
      ),
      this.agentList,
      this.createForm(),
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

  /** The "new agent" form: a context and a band; everything else is the API's defaults. */
  createForm() {
    const context = h("textarea", { attrs: { rows: "3", required: "", placeholder: "You are a concise assistant." } })
    const band = h(
      "select",
      {},
      ["core", "lite", "frontier"].map((name) => h("option", { attrs: { value: name } }, name))
    )
    const form = h(
      "form",
      { class: "create-agent" },
      field("Context", context),
      field("Band", band),
      h("button", { attrs: { type: "submit" } }, "Create agent")
    )
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.api.createAgent({ context: context.value, band: band.value }).then(
        (agent) => ((context.value = ""), this.load(agent.id)),
        (error) => this.fail(error)
      )
    })
    return h("details", { class: "create" }, h("summary", {}, "New agent"), form)
  }

  /**
   * Lists the agents (and selects `selectId`, or keeps the current one).
   * @param {string} [selectId]
   */
  async load(selectId = this.agent?.id) {
    try {
      const page = await this.api.agents()
      this.error.hidden = true
      replace(
        this.agentList,
        page.data.length === 0 ?
          h("li", { class: "empty" }, "No agents yet: create one below or with the API.") :
          page.data.map((agent) =>
            h(
              "li",
              {},
              h(
                "button",
                {
                  class: "item",
                  attrs: { type: "button", "data-agent-id": agent.id, "aria-pressed": String(agent.id === selectId) },
                  on: { click: () => void this.select(agent) }
                },
                h("span", { class: "name" }, agentName(agent)),
                agentName(agent) === agent.id ? null : h("code", { class: "id" }, agent.id),
                h("span", { class: "band" }, agent.band)
              )
            )
          )
      )
      const selected = page.data.find((agent) => agent.id === selectId)
      if (selected !== undefined) await this.select(selected)
    } catch (error) {
      this.fail(error)
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

  /** @param {string} [selectId] */
  async loadThreads(selectId) {
    const agent = this.agent
    if (agent === undefined) return
    try {
      const page = await this.api.threads(agent.id)
      replace(
        this.threadList,
        page.data.length === 0 ? h("li", { class: "empty" }, "No threads yet.") : page.data.map((thread) =>
          h(
            "li",
            {},
            h(
              "button",
              {
                class: "item",
                attrs: { type: "button", "data-thread-id": thread.id, "aria-pressed": String(thread.id === selectId) },
                on: { click: () => this.open(thread, agent) }
              },
              h("code", { class: "id" }, thread.id),
              statusBadge(thread.status),
              time(thread.createdAt)
            )
          )
        )
      )
    } catch (error) {
      this.fail(error)
    }
  }

  /**
   * @param {Thread} thread
   * @param {Agent} agent
   */
  open(thread, agent) {
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
      await this.loadThreads(thread.id)
      this.open(thread, agent)
    } catch (error) {
      this.fail(error)
    }
  }
}
