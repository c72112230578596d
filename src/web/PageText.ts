/**
 * What web_fetch makes of a page for the model to read: HTML reduced to its
 * readable part (Mozilla Readability on a linkedom DOM; scripts, styles,
 * navigation, headers and footers dropped) as Markdown (turndown) or plain
 * text, or the HTML as it came; a PDF reduced to text by poppler's
 * `pdftotext` in a child process (a host without it answers
 * `pdf_runtime_unavailable`, never an empty page).
 */
import { Readability } from "@mozilla/readability"
import { Data, Effect } from "effect"
import { parseHTML } from "linkedom"
import { spawn } from "node:child_process"
import TurndownService from "turndown"

export type PageFormat = "markdown" | "text" | "html"

/** A page that could not be made into text, with the code the model reads. */
export class PageUnreadable extends Data.TaggedError("PageUnreadable")<{
  readonly code: "pdf_runtime_unavailable" | "pdf_unreadable"
  readonly message: string
}> {}

/** Elements that are never the content of a page. */
const chrome = "script, style, noscript, template, iframe, nav, header, footer, aside, form, svg"

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" })

export interface ReadablePage {
  readonly title: string | null
  readonly content: string
}

/** `html` (fetched from `base`) as `format`: its readable part, links made absolute. */
export const readHtml = (html: string, base: string, format: PageFormat): ReadablePage => {
  const { document } = parseHTML(html)
  const title = document.querySelector("title")?.textContent?.trim() || null
  if (format === "html") return { title, content: html }
  for (const [selector, attribute] of [["a[href]", "href"], ["img[src]", "src"]] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute)
      const absolute = value === null ? null : URL.parse(value, base)
      if (absolute !== null) element.setAttribute(attribute, absolute.href)
    }
  }
  for (const element of document.querySelectorAll("script, style, noscript, template")) element.remove()
  // Readability takes the document apart: it reads a copy, the fallback the original.
  const article = new Readability(parseHTML(document.toString()).document).parse()
  const articleHtml = article?.content ?? null
  const body = articleHtml ?? fallbackBody(document)
  const content = format === "markdown"
    ? turndown.turndown(body)
    : (parseHTML(`<!doctype html><html><body>${body}</body></html>`).document.body.textContent ?? "").replace(
      /\n{3,}/g,
      "\n\n"
    ).trim()
  return { title: article?.title?.trim() || title, content: content.trim() }
}

/** The body without the page's chrome, when Readability finds no article. */
const fallbackBody = (document: ReturnType<typeof parseHTML>["document"]): string => {
  for (const element of document.querySelectorAll(chrome)) element.remove()
  return document.body?.innerHTML ?? ""
}

/** A PDF's text (`pdftotext -layout`), through a child process fed on stdin. */
export const pdfText = (bytes: Uint8Array): Effect.Effect<string, PageUnreadable> =>
  Effect.callback<string, PageUnreadable>((resume) => {
    const child = spawn("pdftotext", ["-layout", "-enc", "UTF-8", "-", "-"], { stdio: ["pipe", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.stdin.on("error", () => {}) // a missing binary or an early exit: reported by 'error' or 'close'
    child.on("error", (error: NodeJS.ErrnoException) =>
      resume(Effect.fail(
        error.code === "ENOENT"
          ? new PageUnreadable({
            code: "pdf_runtime_unavailable",
            message: "This deployment cannot read PDFs: poppler's pdftotext is not installed on the host."
          })
          : new PageUnreadable({ code: "pdf_unreadable", message: `pdftotext failed: ${error.message}` })
      )))
    child.on("close", (status) =>
      resume(
        status === 0
          ? Effect.succeed(Buffer.concat(out).toString("utf8").replace(/\f/g, "\n").trim())
          : Effect.fail(
            new PageUnreadable({
              code: "pdf_unreadable",
              message: `The PDF could not be read: ${Buffer.concat(err).toString("utf8").trim() || `exit ${status}`}`
            })
          )
      ))
    child.stdin.end(bytes)
    return Effect.sync(() => child.kill("SIGKILL"))
  })
