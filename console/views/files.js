/**
 * A thread's files and previews: the files its conversation holds
 * (attachments and the artifacts tool calls made, fetched with the key:
 * Download saves one, Preview shows an image or the start of a text), and
 * its managed workspace's state with its preview URLs (signed, expiring:
 * opened in a new tab).
 */
import { h, replace, statusOf, time } from "../dom.js"

/** @typedef {import("../api.js").Api} Api */
/** @typedef {import("../api.js").Thread} Thread */
/** @typedef {import("./history.js").FileRef} FileRef */

/** How much of a text file a preview shows (characters). */
const textPreview = 20_000

export class FilesPanel {
  /** @param {Api} api */
  constructor(api) {
    this.api = api
    this.files = h("ul", { class: "list files", attrs: { "aria-label": "Files" } })
    this.workspace = h("div", { class: "workspace" })
    this.preview = h("div", { class: "preview", attrs: { "aria-live": "polite" } })
    /** @type {Array<string>} object URLs to let go of */
    this.urls = []
    this.element = h(
      "details",
      { class: "files-panel" },
      h("summary", {}, "Files and previews"),
      h("section", { attrs: { "aria-label": "Files and previews" } }, this.workspace, this.files, this.preview)
    )
  }

  /** @param {Thread} thread @param {ReadonlyArray<FileRef>} files */
  show(thread, files) {
    for (const url of this.urls) URL.revokeObjectURL(url)
    this.urls = []
    replace(this.preview)
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
            )
        ]
    )
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
      h("button", {
        attrs: { type: "button", "aria-label": `Preview ${file.name}` },
        on: { click: () => void this.show1(file) }
      }, "Preview"),
      h("button", {
        attrs: { type: "button", "aria-label": `Download ${file.name}` },
        on: { click: () => void this.download(file) }
      }, "Download")
    )
  }

  /** @param {FileRef} file */
  async blobUrl(file) {
    const blob = await this.api.blob(file.path)
    const url = URL.createObjectURL(blob)
    this.urls.push(url)
    return { blob, url }
  }

  /** @param {FileRef} file */
  async show1(file) {
    try {
      const { blob, url } = await this.blobUrl(file)
      const type = blob.type || (file.mediaType ?? "")
      replace(
        this.preview,
        h("h4", {}, file.name),
        type.startsWith("image/")
          ? h("img", { attrs: { src: url, alt: `Preview of ${file.name}` } })
          : type.startsWith("text/") || type.includes("json")
          ? h("pre", { class: "json" }, (await blob.text()).slice(0, textPreview))
          : h("p", {}, `No preview for ${type || "this kind of file"}: download it.`)
      )
    } catch (error) {
      replace(this.preview, h("p", { class: "error", attrs: { role: "alert" } }, statusOf(error)))
    }
  }

  /** @param {FileRef} file */
  async download(file) {
    try {
      const { url } = await this.blobUrl(file)
      const a = h("a", { attrs: { href: url, download: file.name } })
      a.click()
    } catch (error) {
      replace(this.preview, h("p", { class: "error", attrs: { role: "alert" } }, statusOf(error)))
    }
  }
}
