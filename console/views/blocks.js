/**
 * The agent's context as blocks (spec 2.1 ContextBlock: an optional id and
 * its content), each with its own labelled fields; blocks are added and
 * removed with buttons.
 */
import { h } from "../dom.js"
import { isRecord } from "./paths.js"

/**
 * @param {string} label
 * @returns {import("./form.js").Control}
 */
export const blocksControl = (label) => {
  const list = h("div", { class: "blocks" })
  /** @param {{ id?: string, content: string }} block */
  const add = (block) => {
    const n = list.childElementCount + 1
    const id = h("input", { attrs: { type: "text", autocomplete: "off" } })
    const content = h("textarea", { attrs: { rows: "4" } })
    id.value = block.id ?? ""
    content.value = block.content
    const remove = h("button", { attrs: { type: "button" } }, `Remove block ${n}`)
    const box = h(
      "fieldset",
      { class: "block" },
      h("legend", {}, `Block ${n}`),
      h("label", { class: "field" }, h("span", {}, `${label} block ${n}`), content),
      h("label", { class: "field" }, h("span", {}, `Block ${n} id (optional)`), id),
      remove
    )
    remove.addEventListener("click", () => box.remove())
    list.append(box)
    return box
  }
  const more = h("button", { attrs: { type: "button" } }, "Add context block")
  more.addEventListener("click", () => add({ content: "" }).querySelector("textarea")?.focus())
  const element = h("div", { class: "blocks-control" }, list, more)
  return {
    element,
    read: () => {
      const blocks = [...list.querySelectorAll("fieldset")].flatMap((box) => {
        const content = box.querySelector("textarea")?.value ?? ""
        const id = box.querySelector("input")?.value.trim() ?? ""
        return content.trim() === "" ? [] : [id === "" ? { content } : { id, content }]
      })
      return blocks.length === 0 ? undefined : blocks
    },
    write: (value) => {
      list.replaceChildren()
      const blocks = Array.isArray(value) ? value : []
      for (const block of blocks) {
        if (isRecord(block) && typeof block["content"] === "string") {
          add(
            typeof block["id"] === "string"
              ? { id: block["id"], content: block["content"] }
              : { content: block["content"] }
          )
        }
      }
      if (list.childElementCount === 0) add({ content: "" })
    }
  }
}
