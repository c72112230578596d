// LibreOffice and poppler, run by the worker inside the sandbox (it is already there: the sandbox's
// limits, the workspace user, no network). Conversions go through a scratch directory of the
// workspace, then the result is moved where it was asked to go.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs"
import { basename, dirname, extname, join } from "node:path"
import { DocumentError } from "./zip.mjs"

/** LibreOffice's profile: kept in the workspace so that later starts are faster. */
const profile = "/workspace/.svc/office-profile"
const scratchRoot = "/workspace/.svc/tmp"

/** LibreOffice's export filter for each target format (the extension names it otherwise). */
const filters = /** @type {Record<string, string>} */ ({
  pdf: "pdf",
  docx: "docx:MS Word 2007 XML",
  xlsx: "xlsx:Calc MS Excel 2007 XML",
  pptx: "pptx:Impress MS PowerPoint 2007 XML",
  odt: "odt",
  ods: "ods",
  odp: "odp",
  csv: "csv:Text - txt - csv (StarCalc):44,34,76,1",
  html: "html",
  txt: "txt:Text (encoded):UTF8",
  png: "png"
})
export const exportFormats = Object.keys(filters)

/** @param {string} file @param {string[]} args */
const run = (file, args) => {
  const result = spawnSync(file, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (result.error !== undefined) throw new DocumentError(`${file} could not run: ${result.error.message}`)
  return result
}

/**
 * Converts `input` to `format` with LibreOffice headless, into `output`.
 * @param {string} input @param {string} format @param {string} output @param {string[]} [infilter]
 */
export const convert = (input, format, output, infilter = []) => {
  const filter = filters[format]
  if (filter === undefined) throw new DocumentError(`cannot export to '${format}' (one of ${exportFormats.join(", ")})`)
  mkdirSync(scratchRoot, { recursive: true })
  const scratch = mkdtempSync(join(scratchRoot, "convert-"))
  try {
    const result = run("soffice", [
      `-env:UserInstallation=file://${profile}`,
      "--headless",
      "--norestore",
      "--nolockcheck",
      ...infilter,
      "--convert-to",
      filter,
      "--outdir",
      scratch,
      input
    ])
    const made = readdirSync(scratch)
    if (made.length === 0) {
      const why = `${result.stderr ?? ""}${result.stdout ?? ""}`.replace(
        /Warning: failed to launch javaldx[^\n]*\n?/g,
        ""
      ).trim()
      throw new DocumentError(
        `LibreOffice could not convert ${basename(input)} to ${format}${why === "" ? "" : `: ${why.slice(0, 500)}`}`
      )
    }
    mkdirSync(dirname(output), { recursive: true })
    renameSync(join(scratch, made[0]), output)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** The pages of a PDF rendered to PNG files `<prefix>-<n>.png` (pdftoppm). @param {string} pdf @param {string} prefix @param {{ first?: number, last?: number }} pages */
export const renderPages = (pdf, prefix, { first, last }) => {
  mkdirSync(dirname(prefix), { recursive: true })
  const result = run("pdftoppm", [
    "-png",
    "-r",
    "96",
    ...(first === undefined ? [] : ["-f", String(first)]),
    ...(last === undefined ? [] : ["-l", String(last)]),
    pdf,
    prefix
  ])
  if (result.status !== 0) {
    throw new DocumentError(`pdftoppm could not render ${basename(pdf)}: ${result.stderr.trim().slice(0, 500)}`)
  }
  const stem = basename(prefix)
  return readdirSync(dirname(prefix))
    .filter((name) => name.startsWith(`${stem}-`) && name.endsWith(".png"))
    .map((name) => ({ name, page: Number(name.slice(stem.length + 1, -4)) }))
    .filter(({ page }) => Number.isInteger(page))
    .sort((a, b) => a.page - b.page)
    .map(({ name, page }) => ({ page, path: join(dirname(prefix), name) }))
}

/** A PDF's text, page by page (pdftotext; pages split on form feeds). @param {string} pdf @param {{ first?: number, last?: number }} pages */
export const pdfText = (pdf, { first, last }) => {
  const result = run("pdftotext", [
    "-layout",
    "-enc",
    "UTF-8",
    ...(first === undefined ? [] : ["-f", String(first)]),
    ...(last === undefined ? [] : ["-l", String(last)]),
    pdf,
    "-"
  ])
  if (result.status !== 0) {
    throw new DocumentError(`pdftotext could not read ${basename(pdf)}: ${result.stderr.trim().slice(0, 500)}`)
  }
  const pages = result.stdout.split("\f")
  if (pages.at(-1)?.trim() === "") pages.pop()
  return pages
}

/** A scratch PDF of an office document (for previews), removed by `done`. @param {string} input */
export const scratchPdf = (input) => {
  mkdirSync(scratchRoot, { recursive: true })
  const dir = mkdtempSync(join(scratchRoot, "pdf-"))
  const pdf = join(dir, `${basename(input, extname(input))}.pdf`)
  convert(input, "pdf", pdf)
  return { pdf, done: () => rmSync(dir, { recursive: true, force: true }) }
}

export const exists = existsSync
