// Spreadsheets with exceljs: written from rows (a string starting with `=` is a formula), cells
// written by address, and read as Markdown tables whose rows and columns carry the addresses.
// Formulas are computed by LibreOffice, which reopens and saves the file after every write.
import ExcelJS from "exceljs"
import { mkdirSync, readFileSync } from "node:fs"
import { dirname } from "node:path"
import { table } from "./markdown.mjs"
import { convert } from "./office.mjs"
import { DocumentError, openZip, readBytes } from "./zip.mjs"

/** @param {string | number | boolean | null} value */
const cellValue = (value) => typeof value === "string" && value.startsWith("=") ? { formula: value.slice(1) } : value

/**
 * Saves and has LibreOffice recalculate every formula (the file it writes keeps their results).
 * The formulas' cached results are dropped first: LibreOffice computes a formula without one on
 * load, but trusts one it finds (a result from before an edit would stay).
 * @param {ExcelJS.Workbook} workbook @param {string} output
 */
const save = async (workbook, output) => {
  workbook.eachSheet((ws) =>
    ws.eachRow((row) =>
      row.eachCell((cell) => {
        const v = cell.value
        if (v === null || typeof v !== "object") return
        if ("formula" in v) cell.value = { formula: v.formula }
        else if ("sharedFormula" in v) cell.value = { sharedFormula: v.sharedFormula }
      })
    )
  )
  mkdirSync(dirname(output), { recursive: true })
  await workbook.xlsx.writeFile(output)
  convert(output, "xlsx", output)
}

/** @param {Array<{ name?: string, rows: Array<Array<string | number | boolean | null>> }>} sheets @param {string} output */
export const createXlsx = async (sheets, output) => {
  const workbook = new ExcelJS.Workbook()
  for (const [i, sheet] of sheets.entries()) {
    const ws = workbook.addWorksheet(sheet.name ?? `Sheet${i + 1}`)
    for (const [r, row] of sheet.rows.entries()) {
      for (const [c, value] of row.entries()) if (value !== null) ws.getCell(r + 1, c + 1).value = cellValue(value)
    }
  }
  await save(workbook, output)
}

/** @param {string} path */
const load = async (path) => {
  const bytes = readBytes(path)
  await openZip(bytes, path)
  const workbook = new ExcelJS.Workbook()
  try {
    await workbook.xlsx.load(bytes)
  } catch (e) {
    throw new DocumentError(`${path} is not a readable XLSX file: ${e instanceof Error ? e.message : String(e)}`)
  }
  return workbook
}

/** @param {string} path @param {Array<{ cell: string, value: string | number | boolean | null, sheet?: string }>} edits @param {string} output */
export const editXlsx = async (path, edits, output) => {
  const workbook = await load(path)
  for (const edit of edits) {
    const ws = edit.sheet === undefined ? workbook.worksheets[0] : workbook.getWorksheet(edit.sheet)
    if (ws === undefined) throw new DocumentError(`no sheet named ${JSON.stringify(edit.sheet)} in ${path}`)
    if (!/^[A-Z]{1,3}[1-9]\d{0,6}$/.test(edit.cell)) {
      throw new DocumentError(`'${edit.cell}' is not a cell address (like B7)`)
    }
    ws.getCell(edit.cell).value = cellValue(edit.value)
  }
  await save(workbook, output)
  return edits.length
}

/** @param {number} n */
const column = (n) => {
  let s = ""
  for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s
  return s
}

/** @param {ExcelJS.CellValue} v @returns {string} */
const show = (v) => {
  if (v === null || v === undefined) return ""
  if (v instanceof Date) return v.toISOString()
  if (typeof v === "object") {
    if ("formula" in v || "sharedFormula" in v) {
      const f = "formula" in v ? v.formula : v.sharedFormula
      return `${show(/** @type {ExcelJS.CellValue} */ (v.result ?? null))} (=${f})`
    }
    if ("richText" in v) return v.richText.map((t) => t.text).join("")
    if ("text" in v) return String(v.text)
    if ("error" in v) return String(v.error)
  }
  return String(v)
}

/** @param {string[][]} grid */
const addressed = (grid) => {
  const width = Math.max(0, ...grid.map((r) => r.length))
  return table([
    ["", ...Array.from({ length: width }, (_, i) => column(i + 1))],
    ...grid.map((r, i) => [String(i + 1), ...r])
  ])
}

/** @param {string} path @param {string | undefined} sheet */
export const readXlsx = async (path, sheet) => {
  const workbook = await load(path)
  const sheets = sheet === undefined ? workbook.worksheets : [workbook.getWorksheet(sheet)]
  if (sheets[0] === undefined) throw new DocumentError(`no sheet named ${JSON.stringify(sheet)} in ${path}`)
  const out = []
  for (const ws of sheets) {
    if (ws === undefined) continue
    /** @type {string[][]} */
    const grid = []
    for (let r = 1; r <= ws.rowCount; r++) {
      const row = ws.getRow(r)
      grid.push(Array.from({ length: ws.columnCount }, (_, c) => show(row.getCell(c + 1).value)))
    }
    out.push(`## Sheet: ${ws.name}\n\n${addressed(grid)}`)
  }
  return { text: out.join("\n\n"), sheets: workbook.worksheets.map((ws) => ws.name) }
}

/** A CSV file as one addressed table (RFC 4180 quoting). @param {string} path */
export const readCsv = (path) => {
  const source = readFileSync(path, "utf8")
  /** @type {string[][]} */
  const rows = [[]]
  let cell = ""
  let quoted = false
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]
    if (quoted) {
      if (ch === "\"" && source[i + 1] === "\"") (cell += "\"", i++)
      else if (ch === "\"") quoted = false
      else cell += ch
    } else if (ch === "\"") quoted = true
    else if (ch === ",") (rows[rows.length - 1].push(cell), cell = "")
    else if (ch === "\n") (rows[rows.length - 1].push(cell.replace(/\r$/, "")), cell = "", rows.push([]))
    else cell += ch
  }
  if (cell !== "" || rows[rows.length - 1].length > 0) rows[rows.length - 1].push(cell)
  if (rows[rows.length - 1].length === 0) rows.pop()
  return addressed(rows)
}
