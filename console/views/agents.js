/**
 * The agents view: every agent of the workspace by name, with Edit, Delete
 * (after a confirmation) and a link to its threads; New agent opens the
 * editor with every setting of spec 2.1. Saving first checks the definition
 * with `POST /v1/agents/validate` and shows the envelope's field errors next
 * to the fields; a valid one is created (or patched).
 */
import { confirmDialog, h, link, replace, statusOf, time } from "../dom.js"
import { agentName } from "../names.js"
import { agentGroups, createBody, patchBody } from "./agentForm.js"
import { Form } from "./form.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("../api.js").Agent} Agent */
/** @typedef {ReadonlyArray<readonly [string, string]>} Options */

/**
 * The `[id, name]` options of a list route (empty when it is refused: a workspace without that feature).
 * @param {Api} api
 * @param {string} path
 * @returns {Promise<Options>}
 */
const optionsOf = (api, path) =>
  api.get(path, { limit: 100 }).then(
    (page) =>
      /** @type {{ data: Array<{ id: string, name?: string }> }} */ (page).data.map((item) => /** @type {const} */ ([
        item.id,
        item.name === undefined ? item.id : `${item.name} (${item.id})`
      ])),
    () => []
  )

export class AgentsView {
  /** @param {Api} api @param {(agentId: string) => void} onChanged an agent was created, changed or deleted */
  constructor(api, onChanged) {
    this.api = api
    this.onChanged = onChanged
    this.list = h("tbody")
    this.status = h("p", { class: "status-line", attrs: { role: "status" } })
    this.editor = h("section", { class: "editor", attrs: { "aria-label": "Agent editor", hidden: "" } })
    this.element = h(
      "section",
      { class: "view agents-view", attrs: { "aria-labelledby": "agents-title" } },
      h(
        "header",
        {},
        h("h2", { attrs: { id: "agents-title" } }, "Agents"),
        h("button", { attrs: { type: "button" }, on: { click: () => void this.edit(undefined) } }, "New agent")
      ),
      this.status,
      h(
        "table",
        { attrs: { "aria-label": "Agents" } },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Name", "Id", "Band", "Version", "Updated", "Actions"].map((t) => h("th", { attrs: { scope: "col" } }, t))
          )
        ),
        this.list
      ),
      this.editor
    )
  }

  async show() {
    try {
      const page = await this.api.agents()
      replace(
        this.list,
        page.data.length === 0
          ? h("tr", {}, h("td", { attrs: { colspan: "6" }, class: "empty" }, "No agents yet: New agent makes one."))
          : page.data.map((agent) => this.row(agent))
      )
    } catch (error) {
      this.status.textContent = statusOf(error)
    }
  }

  /** @param {Agent} agent */
  row(agent) {
    return h(
      "tr",
      { attrs: { "data-agent-id": agent.id } },
      h("th", { attrs: { scope: "row" } }, link(`#/threads?agent=${agent.id}`, agentName(agent))),
      h("td", {}, h("code", {}, agent.id)),
      h("td", {}, agent.band),
      h("td", {}, agent.configVersion),
      h("td", {}, time(agent.updatedAt)),
      h(
        "td",
        { class: "actions" },
        h("button", {
          attrs: { type: "button", "aria-label": `Edit ${agentName(agent)}` },
          on: { click: () => void this.edit(agent) }
        }, "Edit"),
        h(
          "button",
          {
            class: "danger",
            attrs: { type: "button", "aria-label": `Delete ${agentName(agent)}` },
            on: { click: () => void this.remove(agent) }
          },
          "Delete"
        )
      )
    )
  }

  /** @param {Agent} agent */
  async remove(agent) {
    if (!(await confirmDialog(`Delete agent ${agentName(agent)}? Its threads go with it.`, "Delete"))) return
    try {
      await this.api.deleteAgent(agent.id)
      this.status.textContent = `Deleted ${agentName(agent)}.`
      this.editor.hidden = true
      this.onChanged(agent.id)
      await this.show()
    } catch (error) {
      this.status.textContent = statusOf(error)
    }
  }

  /** Opens the editor on `agent`, or empty for a new one. @param {Agent | undefined} agent */
  async edit(agent) {
    const [toolServers, httpConnections, hooks, resultHandlers, secretContexts, codehost] = await Promise.all(
      [
        "/v1/tool-servers",
        "/v1/http-connections",
        "/v1/tool-approval-hooks",
        "/v1/result-handlers",
        "/v1/secret-contexts",
        "/v1/codehost-connections"
      ]
        .map((path) => optionsOf(this.api, path))
    )
    const bands = await this.api.bands().then(
      (page) =>
        page.data.map((
          band
        ) => /** @type {const} */ ([band.name, band.available ? band.name : `${band.name} (unavailable)`])),
      () => /** @type {Options} */ ([["core", "core"], ["lite", "lite"], ["frontier", "frontier"]])
    )
    const form = new Form(
      agentGroups({ bands, toolServers, httpConnections, hooks, resultHandlers, secretContexts, codehost })
    )
    form.write(agent ?? { band: "core", artifacts: { stream: { urls: "durable-only" } } })
    const title = agent === undefined ? "New agent" : `Edit ${agentName(agent)}`
    const save = h("button", { attrs: { type: "submit" } }, agent === undefined ? "Create agent" : "Save changes")
    const check = h("button", { attrs: { type: "button" } }, "Check")
    const cancel = h(
      "button",
      { attrs: { type: "button" }, on: { click: () => void (this.editor.hidden = true) } },
      "Cancel"
    )
    const done = h("p", { class: "status-line", attrs: { role: "status" } })
    const element = h(
      "form",
      { class: "agent-form", attrs: { novalidate: "" } },
      h("h3", {}, title),
      form.element,
      h("div", { class: "actions" }, save, check, cancel),
      done
    )
    /** Validates; answers the create body when the service accepts it. */
    const validate = async () => {
      done.textContent = ""
      try {
        const body = createBody(form.read("create"))
        await this.api.validateAgent(body)
        form.clearErrors()
        return body
      } catch (error) {
        form.showFailure(error)
        return undefined
      }
    }
    check.addEventListener(
      "click",
      () => void validate().then((ok) => ok !== undefined && (done.textContent = "Valid."))
    )
    element.addEventListener("submit", (event) => {
      event.preventDefault()
      void (async () => {
        const body = await validate()
        if (body === undefined) return
        try {
          const saved = agent === undefined
            ? await this.api.createAgent(body)
            : await this.api.updateAgent(agent.id, patchBody(body, agent))
          this.editor.hidden = true
          this.status.textContent = `${agent === undefined ? "Created" : "Saved"} ${agentName(saved)}.`
          this.onChanged(saved.id)
          await this.show()
        } catch (error) {
          form.showFailure(error)
        }
      })()
    })
    replace(this.editor, element)
    this.editor.setAttribute("aria-label", title)
    this.editor.hidden = false
    const first = /** @type {HTMLElement | null} */ (element.querySelector("input, textarea, select"))
    first?.focus()
  }
}
