// PDF AcroForms with pdf-lib: the fields listed, or filled and saved.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { PDFCheckBox, PDFDocument, PDFDropdown, PDFOptionList, PDFRadioGroup, PDFTextField } from "pdf-lib"
import { DocumentError, readBytes } from "./zip.mjs"

/** @param {string} path */
const load = async (path) => {
  try {
    return await PDFDocument.load(readBytes(path), { updateMetadata: false })
  } catch (e) {
    if (e instanceof DocumentError) throw e
    throw new DocumentError(`${path} is not a readable PDF: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** @param {import("pdf-lib").PDFField} field */
const describe = (field) => {
  const name = field.getName()
  if (field instanceof PDFTextField) return { name, type: "text", value: field.getText() ?? "" }
  if (field instanceof PDFCheckBox) return { name, type: "checkbox", value: field.isChecked() }
  if (field instanceof PDFDropdown) {
    return { name, type: "dropdown", value: field.getSelected()[0] ?? "", options: field.getOptions() }
  }
  if (field instanceof PDFOptionList) {
    return { name, type: "list", value: field.getSelected()[0] ?? "", options: field.getOptions() }
  }
  if (field instanceof PDFRadioGroup) {
    return { name, type: "radio", value: field.getSelected() ?? "", options: field.getOptions() }
  }
  return { name, type: "other", value: "" }
}

/** @param {string} path */
export const pdfFields = async (path) => (await load(path)).getForm().getFields().map(describe)

/** @param {string} path @param {Record<string, string | boolean>} values @param {string} output */
export const fillPdf = async (path, values, output) => {
  const doc = await load(path)
  const form = doc.getForm()
  for (const [name, value] of Object.entries(values)) {
    const field = form.getFields().find((f) => f.getName() === name)
    if (field === undefined) throw new DocumentError(`no form field named ${JSON.stringify(name)} in ${path}`)
    if (field instanceof PDFCheckBox) value === true || value === "true" ? field.check() : field.uncheck()
    else if (typeof value !== "string") {
      throw new DocumentError(`field ${JSON.stringify(name)} takes text, not ${typeof value}`)
    } else if (field instanceof PDFTextField) field.setText(value)
    else if (field instanceof PDFDropdown || field instanceof PDFOptionList || field instanceof PDFRadioGroup) {
      if (!field.getOptions().includes(value)) {
        throw new DocumentError(`field ${JSON.stringify(name)} takes one of ${JSON.stringify(field.getOptions())}`)
      }
      field.select(value)
    } else throw new DocumentError(`field ${JSON.stringify(name)} cannot be filled`)
  }
  mkdirSync(dirname(output), { recursive: true })
  writeFileSync(output, await doc.save())
  return Object.keys(values).length
}
