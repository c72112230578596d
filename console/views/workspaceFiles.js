/**
 * The files of a thread's managed workspace (GET /v1/threads/:id/workspace/files),
 * a directory at a time: a path bar to go back up, folders that open, files
 * with Preview and Download (the artifacts' preview code, preview.js), links
 * shown as links (the service never follows them), "Show more" for the next
 * page, "Refresh files" for what a run wrote since. A workspace whose files
 * are not on the node that answered says so.
 */
import { h, replace, statusOf, time } from "../dom.js"
import { fileActions } from "./preview.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("./preview.js").Previewer} Previewer */
/** @typedef {{ name: string, path: string, type: "file" | "directory" | "symlink" | "other", size: number, modifiedAt: string }} Entry */

/** @param {number} bytes */
const sizeOf = (bytes) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KiB`
    : `${(bytes / 1048576).toFixed(1)} MiB`

export class WorkspaceFiles {
  /** @param {Api} api @param {Previewer} previewer */
  constructor(api, previewer) {
    this.api = api
    this.previewer = previewer
    /** @type {string | undefined} */
    this.threadId = undefined
    this.path = ""
    this.crumbs = h("nav", { class: "crumbs", attrs: { "aria-label": "Workspace folder" } })
    this.list = h("ul", { class: "list files", attrs: { "aria-label": "Workspace files", tabindex: "-1" } })
    this.element = h(
      "section",
      { class: "workspace-files", attrs: { "aria-label": "Workspace files" } },
      h(
        "div",
        { class: "actions" },
        this.crumbs,
        h("button", {
          attrs: { type: "button" },
          on: { click: () => void this.open(this.path, false) }
        }, "Refresh files")
      ),
      this.list
    )
  }

  /** Shows the thread's folder: the one open when it is the same thread, else the root. @param {string} threadId */
  show(threadId) {
    if (threadId !== this.threadId) this.path = ""
    this.threadId = threadId
    void this.open(this.path, false)
  }

  /** @param {string} path @param {boolean} focus move focus to the listing (a folder the reader opened) */
  async open(path, focus) {
    const threadId = this.threadId
    if (threadId === undefined) return
    this.path = path
    this.crumbsOf(path)
    try {
      const page = await this.api.workspaceFiles(threadId, path)
      if (threadId !== this.threadId || path !== this.path) return
      replace(
        this.list,
        page.data.length === 0
          ? h("li", { class: "empty" }, "This folder is empty.")
          : page.data.map((e) => this.item(e))
      )
      this.more(page.nextCursor)
      if (focus) this.list.focus()
    } catch (error) {
      replace(this.list, h("li", { class: "error", attrs: { role: "alert" } }, statusOf(error)))
    }
  }

  /** A "Show more" button for the next page, if any. @param {string | null} cursor */
  more(cursor) {
    if (cursor === null) return
    const threadId = this.threadId ?? ""
    const path = this.path
    const button = h("button", { attrs: { type: "button" } }, "Show more files")
    button.addEventListener("click", async () => {
      try {
        const page = await this.api.workspaceFiles(threadId, path, cursor)
        button.closest("li")?.remove()
        this.list.append(...page.data.map((e) => this.item(e)))
        this.more(page.nextCursor)
      } catch (error) {
        this.previewer.failed(error)
      }
    })
    this.list.append(h("li", {}, button))
  }

  /** The path bar: the root, then each folder of `path`, each a button back to it. @param {string} path */
  crumbsOf(path) {
    const parts = path === "" ? [] : path.split("/")
    const crumb = (/** @type {string} */ label, /** @type {string} */ to, /** @type {boolean} */ current) =>
      current
        ? h("span", { attrs: { "aria-current": "location" } }, label)
        : h(
          "button",
          { class: "link", attrs: { type: "button" }, on: { click: () => void this.open(to, true) } },
          label
        )
    replace(
      this.crumbs,
      crumb("workspace", "", parts.length === 0),
      parts.flatMap((part, i) => [" / ", crumb(part, parts.slice(0, i + 1).join("/"), i === parts.length - 1)])
    )
  }

  /** @param {Entry} entry */
  item(entry) {
    const meta = h(
      "span",
      { class: "meta" },
      entry.type === "directory"
        ? "folder"
        : entry.type === "file"
        ? sizeOf(entry.size)
        : entry.type === "symlink"
        ? "link (not followed)"
        : entry.type,
      " ",
      time(entry.modifiedAt)
    )
    if (entry.type === "directory") {
      return h(
        "li",
        { attrs: { "data-path": entry.path } },
        h("button", {
          class: "link",
          attrs: { type: "button", "aria-label": `Open folder ${entry.name}` },
          on: { click: () => void this.open(entry.path, true) }
        }, `${entry.name}/`),
        " ",
        meta
      )
    }
    const content = `/v1/threads/${this.threadId ?? ""}/workspace/files/content?path=${encodeURIComponent(entry.path)}`
    return h(
      "li",
      { attrs: { "data-path": entry.path } },
      h("span", { class: "name" }, entry.name),
      " ",
      meta,
      entry.type === "file" ? fileActions(this.previewer, content, entry.name) : null
    )
  }
}
