// The document worker: one request as JSON on stdin, one answer as JSON on stdout. It runs inside
// the thread's sandbox on the host's Node (src/documents/DocumentRuntime.ts says why), with the
// service's node_modules bound read-only beside it. An expected failure exits 3 with
// `{ "error": message }`; anything else (a crash, a limit) is the service's to report.
import { existsSync, mkdirSync, realpathSync, rmSync } from "node:fs"
import { basename, dirname, extname, join } from "node:path"
import { parse } from "./markdown.mjs"
import { convert, exportFormats, pdfText, renderPages, scratchPdf } from "./office.mjs"
import { DocumentError, openZip, readBytes } from "./zip.mjs"

// Each library is loaded only by the requests that need it: a start of the worker stays short.
const pdf = () => import("./pdf.mjs")
const sheets = () => import("./sheets.mjs")
const word = () => import("./word.mjs")

const root = "/workspace/"
const maxText = 1_000_000

/** A path of the request, where it really is: inside the workspace, links followed. @param {string} path */
const confined = (path) => {
  let probe = path
  while (!existsSync(probe)) probe = dirname(probe)
  const real = realpathSync(probe)
  if (real !== "/workspace" && !real.startsWith(root)) {
    throw new DocumentError(`${path.slice(root.length)} leads out of the workspace`)
  }
  return path
}
/** @param {string} path */
const kindOf = (path) => extname(path).slice(1).toLowerCase()
/** @param {string} path */
const rel = (path) => path.slice(root.length)
/** @param {string} path */
const existing = (path) => {
  if (!existsSync(confined(path))) throw new DocumentError(`no such file: ${rel(path)}`)
  return path
}

/** Zip-based formats (OOXML, ODF) LibreOffice would inflate: their directory is checked first (zip bombs). */
const zipped = new Set(["docx", "xlsx", "pptx", "odt", "ods", "odp", "docm", "xlsm", "pptm"])
/** @param {string} path */
const unzippable = async (path) => {
  if (zipped.has(kindOf(path))) await openZip(readBytes(path), rel(path))
  return path
}

/** The Markdown tables of `content` as sheets (numbers as numbers). @param {string} content */
const sheetsOf = (content) => {
  const tables = parse(content).flatMap((b) => (b.type === "table" ? [b.rows] : []))
  if (tables.length === 0) throw new DocumentError("content has no Markdown table to make a sheet of; give sheets")
  return tables.map((rows) => ({
    rows: rows.map((row) => row.map((cell) => (/^-?\d+(\.\d+)?$/.test(cell) ? Number(cell) : cell)))
  }))
}

/** @param {any} req */
const handle = async (req) => {
  switch (req.op) {
    case "read": {
      const path = existing(req.path)
      const pages = { first: req.first, last: req.last }
      switch (kindOf(path)) {
        case "docx":
          return { format: "docx", text: await (await word()).readDocx(path) }
        case "xlsx":
          return { format: "xlsx", ...(await (await sheets()).readXlsx(path, req.sheet)) }
        case "csv":
          return { format: "csv", text: (await sheets()).readCsv(path) }
        case "pptx":
          return { format: "pptx", ...(await (await word()).readPptx(path, pages)) }
        case "pdf": {
          const text = pdfText(path, pages)
          const first = req.first ?? 1
          return { format: "pdf", text: text.map((t, i) => `## Page ${first + i}\n\n${t.trimEnd()}`).join("\n\n") }
        }
        default:
          throw new DocumentError(`cannot read .${kindOf(path)} files (docx, xlsx, csv, pptx, pdf)`)
      }
    }
    case "create": {
      const path = confined(req.path)
      switch (req.format) {
        case "docx":
          await (await word()).createDocx(req.content ?? "", path)
          return {}
        case "pdf": {
          mkdirSync("/workspace/.svc/tmp", { recursive: true })
          const docx = join("/workspace/.svc/tmp", `${basename(path, extname(path))}-${process.pid}.docx`)
          await (await word()).createDocx(req.content ?? "", docx)
          try {
            convert(docx, "pdf", path)
          } finally {
            rmSync(docx, { force: true })
          }
          return {}
        }
        case "pptx":
          return { slides: (await word()).createPptx(req.content ?? "", path) }
        case "xlsx":
          await (await sheets()).createXlsx(req.sheets ?? sheetsOf(req.content ?? ""), path)
          return {}
        default:
          throw new DocumentError(`cannot create '${req.format}'`)
      }
    }
    case "edit": {
      const path = existing(req.path)
      const output = confined(req.output)
      const kind = kindOf(path)
      if (kind === "xlsx") return { cells: await (await sheets()).editXlsx(path, req.cells, output) }
      if (kind === "docx" || kind === "pptx") {
        return { replacements: await (await word()).replaceText(path, kind, req.replacements, output) }
      }
      throw new DocumentError(`cannot edit .${kind} files (docx, pptx, xlsx)`)
    }
    case "fill": {
      const path = existing(req.path)
      const kind = kindOf(path)
      if (kind === "pdf") {
        if (req.fields === undefined) return { fields: await (await pdf()).pdfFields(path) }
        await (await pdf()).fillPdf(path, req.fields, confined(req.output))
        return { fields: await (await pdf()).pdfFields(confined(req.output)) }
      }
      if (kind === "docx") {
        if (req.fields === undefined) {
          return { fields: (await (await word()).placeholders(path)).map((name) => ({ name, type: "placeholder" })) }
        }
        const replacements = Object.entries(req.fields).map(([name, value]) => ({
          find: `{{${name}}}`,
          replace: String(value)
        }))
        await (await word()).replaceText(path, "docx", replacements, confined(req.output))
        return {
          fields: (await (await word()).placeholders(confined(req.output))).map((name) => ({
            name,
            type: "placeholder"
          }))
        }
      }
      throw new DocumentError(`cannot fill .${kind} files (pdf forms, docx templates)`)
    }
    case "export": {
      const path = await unzippable(existing(req.path))
      if (!exportFormats.includes(req.format)) throw new DocumentError(`cannot export to '${req.format}'`)
      const pdfSource = kindOf(path) === "pdf" ? ["--infilter=writer_pdf_import"] : []
      convert(path, req.format, confined(req.output), pdfSource)
      return {}
    }
    case "preview": {
      const path = await unzippable(existing(req.path))
      const pages = { first: req.first, last: req.last }
      const prefix = confined(req.prefix)
      if (kindOf(path) === "pdf") return { pages: renderPages(path, prefix, pages) }
      const scratch = scratchPdf(path)
      try {
        return { pages: renderPages(scratch.pdf, prefix, pages) }
      } finally {
        scratch.done()
      }
    }
    default:
      throw new DocumentError(`unknown operation ${JSON.stringify(req.op)}`)
  }
}

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"))
try {
  const answer = await handle(request)
  // What a read returns is capped (the tool's answer travels on stdout); the model narrows with pages or sheet.
  if (typeof answer.text === "string" && answer.text.length > maxText) {
    answer.text = answer.text.slice(0, maxText)
    answer.truncated = true
  }
  process.stdout.write(JSON.stringify(answer))
} catch (e) {
  // A library's exception on a malformed document is the document's failure too; a crash (out of
  // memory, a limit's signal) never gets here. Paths as the model gave them: relative to the root.
  const message = e instanceof DocumentError
    ? e.message
    : `${request.path} could not be processed: ${e instanceof Error ? e.message : String(e)}`
  process.stdout.write(JSON.stringify({ error: message.replaceAll(root, "") }))
  process.exitCode = 3
}
