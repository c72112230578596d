/**
 * A thread's files and previews: the files its conversation holds
 * (attachments and the artifacts tool calls made, fetched with the key:
 * Download saves one, Preview shows an image or the start of a text), and
 * its managed workspace's state, its preview URLs (signed, expiring:
 * opened in a new tab) and its files (workspaceFiles.js).
 */
import { h, replace, time } from "../dom.js"
import { fileActions, Previewer } from "./preview.js"
import { WorkspaceFiles } from "./workspaceFiles.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("../api.js").Thread} Thread */
/** @typedef {import("./history.js").FileRef} FileRef */

export class FilesPanel {
  /** @param {Api} api */
  constructor(api) {
    this.api = api
    this.files = h("ul", { class: "list files", attrs: { "aria-label": "Files" } })
    this.workspace = h("div", { class: "workspace" })
    this.preview = h("div", { class: "preview", attrs: { "aria-live": "polite" } })
    this.previewer = new Previewer(api, this.preview)
    this.workspaceFiles = new WorkspaceFiles(api, this.previewer)
    this.element = h(
      "details",
      { class: "files-panel" },
      h("summary", {}, "Files and previews"),
      h(
        "section",
        { attrs: { "aria-label": "Files and previews" } },
        this.workspace,
        h("h4", {}, "Files in the conversation"),
        this.files,
        this.preview
      )
    )
  }

  /** @param {Thread} thread @param {ReadonlyArray<FileRef>} files */
  show(thread, files) {
    this.previewer.clear()
    const workspace = thread.workspace
    replace(
      this.workspace,
      workspace === null
        ? h("p", { class: "empty" }, "This agent has no managed workspace.")
        : [
          h(
            "p",
            {},
            "Workspace: ",
            h("span", { class: "status", attrs: { "data-status": workspace.status } }, workspace.status)
          ),
          (workspace.previews ?? []).length === 0
            ? h("p", { class: "empty" }, "No previews open.")
            : h(
              "ul",
              { class: "list", attrs: { "aria-label": "Previews" } },
              (workspace.previews ?? []).map((preview) =>
                h(
                  "li",
                  {},
                  h(
                    "a",
                    { attrs: { href: preview.url, target: "_blank", rel: "noopener noreferrer" } },
                    `Port ${preview.port}`
                  ),
                  " expires ",
                  time(preview.expiresAt)
                )
              )
            ),
          h("h4", {}, "Files in the workspace"),
          this.workspaceFiles.element
        ]
    )
    if (workspace !== null) this.workspaceFiles.show(thread.id)
    replace(
      this.files,
      files.length === 0
        ? h("li", { class: "empty" }, "No files in this conversation yet.")
        : files.map((file) => this.item(file))
    )
    this.element.querySelector("summary")?.replaceChildren(`Files and previews (${files.length})`)
  }

  /** @param {FileRef} file */
  item(file) {
    return h(
      "li",
      { attrs: { "data-path": file.path } },
      h("span", { class: "name" }, file.name),
      " ",
      h("span", { class: "meta" }, file.mediaType ?? ""),
      " ",
      fileActions(this.previewer, file.path, file.name, file.mediaType)
    )
  }
}
