/**
 * The runs view: the workspace's runs, newest first (`GET /v1/runs`),
 * filtered by agent, status, thread and creation time, a page at a time
 * (More follows the cursor). A run links to its thread's conversation.
 */
import { field, h, link, replace, statusOf, time } from "../dom.js"
import { agentName } from "../names.js"
import { statusBadge } from "./runView.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("../api.js").Run} Run */

const statuses = [
  "queued",
  "preparing",
  "running",
  "waiting_for_approval",
  "waiting_for_input",
  "completed",
  "failed",
  "cancelled"
]

export class RunsView {
  /** @param {Api} api */
  constructor(api) {
    this.api = api
    /** @type {Map<string, string>} agent names by id */
    this.names = new Map()
    this.agent = h("select", {}, h("option", { attrs: { value: "" } }, "Any agent"))
    this.statusFilter = h(
      "select",
      {},
      h("option", { attrs: { value: "" } }, "Any status"),
      statuses.map((s) => h("option", { attrs: { value: s } }, s.replaceAll("_", " ")))
    )
    this.thread = h("input", { attrs: { type: "text", placeholder: "thread_…", autocomplete: "off" } })
    this.since = h("input", { attrs: { type: "datetime-local" } })
    this.body = h("tbody")
    this.more = h("button", { attrs: { type: "button", hidden: "" } }, "More")
    this.status = h("p", { class: "status-line", attrs: { role: "status" } })
    /** @type {string | null} */
    this.cursor = null
    const filters = h(
      "form",
      { class: "filters", attrs: { "aria-label": "Run filters" } },
      field("Agent", this.agent),
      field("Status", this.statusFilter),
      field("Thread", this.thread),
      field("Created since", this.since),
      h("button", { attrs: { type: "submit" } }, "Apply")
    )
    filters.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.load(false)
    })
    for (const select of [this.agent, this.statusFilter]) select.addEventListener("change", () => void this.load(false))
    this.more.addEventListener("click", () => void this.load(true))
    this.element = h(
      "section",
      { class: "view", attrs: { "aria-labelledby": "runs-title" } },
      h("header", {}, h("h2", { attrs: { id: "runs-title" } }, "Runs")),
      filters,
      this.status,
      h(
        "table",
        { attrs: { "aria-label": "Runs" } },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Run", "Status", "Agent", "Thread", "Created", "Cost (US cents)"].map((t) =>
              h("th", { attrs: { scope: "col" } }, t)
            )
          )
        ),
        this.body
      ),
      this.more
    )
  }

  async show() {
    try {
      const agents = await this.api.agents()
      this.names = new Map(agents.data.map((a) => [a.id, agentName(a)]))
      const chosen = this.agent.value
      replace(
        this.agent,
        h("option", { attrs: { value: "" } }, "Any agent"),
        agents.data.map((a) => h("option", { attrs: { value: a.id } }, agentName(a)))
      )
      this.agent.value = chosen
    } catch (error) {
      this.status.textContent = statusOf(error)
    }
    await this.load(false)
  }

  /** @param {boolean} more the next page after the rows shown */
  async load(more) {
    const since = this.since.value === "" ? undefined : new Date(this.since.value).toISOString()
    try {
      const page = await this.api.runs({
        limit: 25,
        ...(this.agent.value === "" ? {} : { agentId: this.agent.value }),
        ...(this.statusFilter.value === "" ? {} : { status: this.statusFilter.value }),
        ...(this.thread.value.trim() === "" ? {} : { threadId: this.thread.value.trim() }),
        ...(since === undefined ? {} : { createdSince: since }),
        ...(more && this.cursor !== null ? { cursor: this.cursor } : {})
      })
      this.status.textContent = ""
      const rows = page.data.map((run) => this.row(run))
      if (more) this.body.append(...rows)
      else {replace(
          this.body,
          rows.length === 0 ? h("tr", {}, h("td", { class: "empty", attrs: { colspan: "6" } }, "No runs match.")) : rows
        )}
      this.cursor = page.nextCursor
      this.more.hidden = !page.hasMore
    } catch (error) {
      this.status.textContent = statusOf(error)
    }
  }

  /** @param {Run} run */
  row(run) {
    return h(
      "tr",
      { attrs: { "data-run-id": run.id } },
      h("td", {}, link(`#/threads/${run.threadId}`, h("code", {}, run.id))),
      h("td", {}, statusBadge(run.status)),
      h("td", {}, this.names.get(run.agentId) ?? run.agentId),
      h("td", {}, link(`#/threads/${run.threadId}`, h("code", {}, run.threadId))),
      h("td", {}, time(run.createdAt)),
      h("td", {}, run.usage?.costCents ?? "-")
    )
  }
}
