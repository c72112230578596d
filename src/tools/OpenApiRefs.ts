/**
 * The local `$ref`s of an OpenAPI document (`#/components/schemas/Pet`,
 * `#/definitions/Pet`, `#/paths/~1pets/get/parameters/0`) replaced by what they
 * point at, in time and memory linear in the document: every object of the
 * document is copied once and shared by every place that refers to it, so the
 * result is a graph of the document's size even when its expansion would not
 * fit in memory (a schema referring to the next one ten times, eight levels
 * deep). What that graph expands to is measured, with a budget, where it is
 * used (SchemaBudget.ts). A reference back into an object being resolved (a
 * recursive schema) is kept as the `$ref` object, as are references that
 * point nowhere or outside the document: a document never makes the service
 * read a file or another URL. Iterative, so no nesting exhausts the stack.
 */

/** References followed in a row (a `$ref` to a `$ref` ...) before one is kept as it is. */
const MaxHops = 32

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const localRef = (node: Record<string, unknown>): string | undefined => {
  const ref = node["$ref"]
  return typeof ref === "string" && ref.startsWith("#") ? ref : undefined
}

const segment = (raw: string): string => {
  const decoded = (() => {
    try {
      return decodeURIComponent(raw)
    } catch {
      return raw
    }
  })()
  return decoded.replace(/~1/g, "/").replace(/~0/g, "~")
}

/**
 * The node each local JSON pointer names, following references met on the way (each pointer
 * resolved once; a chain longer than MaxHops or back into itself names nothing): undefined when
 * it names nothing.
 */
const resolver = (root: unknown) => {
  const memo = new Map<string, unknown>()
  const busy = new Set<string>()
  const resolve = (ref: string, depth: number): unknown => {
    if (memo.has(ref)) return memo.get(ref)
    const path = ref.slice(1)
    if (busy.has(ref) || depth > MaxHops || (path !== "" && !path.startsWith("/"))) return undefined
    busy.add(ref)
    let node: unknown = root
    for (const raw of path === "" ? [] : path.slice(1).split("/")) {
      for (let hop = 0; hop <= MaxHops && isObject(node) && !Array.isArray(node); hop++) {
        const inner = localRef(node)
        if (inner === undefined) break
        node = hop === MaxHops ? undefined : resolve(inner, depth + 1)
      }
      const key = segment(raw)
      node = isObject(node) && Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined
      if (node === undefined) break
    }
    busy.delete(ref)
    memo.set(ref, node)
    return node
  }
  return (ref: string) => resolve(ref, 0)
}

type Frame =
  | { readonly kind: "visit"; readonly node: unknown; readonly hops: number; readonly set: (value: unknown) => void }
  | { readonly kind: "close"; readonly node: object }

/** `document` with its local references resolved into shared nodes (see the module header). */
export const dereference = (document: unknown): unknown => {
  const resolve = resolver(document)
  const copies = new Map<object, unknown>()
  /** Objects whose copy is being filled: a reference to one of them is recursive. */
  const open = new Set<object>()
  let result: unknown
  const stack: Array<Frame> = [{ kind: "visit", node: document, hops: 0, set: (value) => (result = value) }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    if (frame.kind === "close") {
      open.delete(frame.node)
      continue
    }
    const { hops, node, set } = frame
    if (!isObject(node)) {
      set(node)
      continue
    }
    const ref = Array.isArray(node) ? undefined : localRef(node)
    if (ref !== undefined) {
      const target = hops < MaxHops ? resolve(ref) : undefined
      if (target === undefined || (isObject(target) && open.has(target))) set(node)
      else stack.push({ kind: "visit", node: target, hops: hops + 1, set })
      continue
    }
    const copied = copies.get(node)
    if (copied !== undefined) {
      set(copied)
      continue
    }
    const out: Array<unknown> | Record<string, unknown> = Array.isArray(node) ? new Array(node.length) : {}
    copies.set(node, out)
    set(out)
    open.add(node)
    stack.push({ kind: "close", node })
    const entries = Object.entries(node)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, value] = entries[i]!
      stack.push({
        kind: "visit",
        node: value,
        hops: 0,
        set: (v) => ((out as Record<string, unknown>)[key] = v)
      })
    }
  }
  return result
}
