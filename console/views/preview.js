/**
 * Previews and downloads of bytes fetched with the key (an artifact, an
 * attachment, a workspace file): an image shown, the start of a text, or a
 * line saying to download it. Object URLs are kept to be let go of when the
 * panel shows something else.
 */
import { h, replace, statusOf } from "../dom.js"

/** @typedef {import("../api.js").Api} Api */

/** How much of a text file a preview shows (characters). */
const textPreview = 20_000

export class Previewer {
  /** @param {Api} api @param {HTMLElement} into where previews and errors are shown */
  constructor(api, into) {
    this.api = api
    this.into = into
    /** @type {Array<string>} object URLs to let go of */
    this.urls = []
  }

  clear() {
    for (const url of this.urls) URL.revokeObjectURL(url)
    this.urls = []
    replace(this.into)
  }

  /** @param {string} path a path of this service */
  async blobUrl(path) {
    const blob = await this.api.blob(path)
    const url = URL.createObjectURL(blob)
    this.urls.push(url)
    return { blob, url }
  }

  /**
   * Shows `name` (at `path`): an image, the start of a text, or a line saying to download it.
   * @param {string} path @param {string} name @param {string | undefined} mediaType the type when the response has none
   */
  async preview(path, name, mediaType) {
    try {
      const { blob, url } = await this.blobUrl(path)
      const type = blob.type || (mediaType ?? "")
      replace(
        this.into,
        h("h4", {}, name),
        type.startsWith("image/")
          ? h("img", { attrs: { src: url, alt: `Preview of ${name}` } })
          : type.startsWith("text/") || type.includes("json")
          ? h(
            "pre",
            { class: "json", attrs: { "aria-label": `Preview of ${name}` } },
            (await blob.text()).slice(0, textPreview)
          )
          : h("p", {}, `No preview for ${type || "this kind of file"}: download it.`)
      )
    } catch (error) {
      this.failed(error)
    }
  }

  /** Saves the bytes at `path` as `name`. @param {string} path @param {string} name */
  async download(path, name) {
    try {
      const { url } = await this.blobUrl(path)
      h("a", { attrs: { href: url, download: name } }).click()
    } catch (error) {
      this.failed(error)
    }
  }

  /** @param {unknown} error */
  failed(error) {
    replace(this.into, h("p", { class: "error", attrs: { role: "alert" } }, statusOf(error)))
  }
}

/**
 * Preview and Download buttons for one file, named after it.
 * @param {Previewer} previewer @param {string} path @param {string} name @param {string} [mediaType]
 */
export const fileActions = (previewer, path, name, mediaType) => [
  h("button", {
    attrs: { type: "button", "aria-label": `Preview ${name}` },
    on: { click: () => void previewer.preview(path, name, mediaType) }
  }, "Preview"),
  h("button", {
    attrs: { type: "button", "aria-label": `Download ${name}` },
    on: { click: () => void previewer.download(path, name) }
  }, "Download")
]
