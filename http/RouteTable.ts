/**
 * The route templates of the HTTP surface (`/v1/agents/:id`): which one a
 * request's path matches, for metrics labels and span names (never the raw
 * path, whose ids would make every request a series of its own), and which
 * methods a known path accepts (405 rather than 404).
 */

/** The part of an HttpApi this reads: each endpoint's method and path. */
export interface RouteTable {
  readonly groups: Readonly<
    Record<string, { readonly endpoints: Readonly<Record<string, { readonly method: string; readonly path: string }>> }>
  >
}

interface RouteShape {
  readonly method: string
  readonly template: string
  readonly pattern: RegExp
}

export interface RouteMatcher {
  /** The template `method path` was routed to, or undefined when no route matches. */
  readonly route: (method: string, path: string) => string | undefined
  /** Every method some route accepts at `path`. */
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
}

/** The label of a request no route matched. */
export const Unmatched = "unmatched"

/**
 * `extra`: routes outside the HttpApi. A template ending in `*` matches every
 * path below it (`/v1/previews/*`).
 */
export const matcher = (api: RouteTable, extra: ReadonlyArray<readonly [string, string]>): RouteMatcher => {
  const shapes: Array<RouteShape> = []
  const add = (method: string, template: string) => {
    const body = template.endsWith("*")
      ? `${escape(template.slice(0, -1))}.*`
      : template.split(/(:[A-Za-z]+)/).map((part) => (part.startsWith(":") ? "[^/]+" : escape(part))).join("")
    shapes.push({ method, template, pattern: new RegExp(`^${body}/?$`) })
  }
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) add(endpoint.method, endpoint.path)
  }
  for (const [method, path] of extra) add(method, path)
  return {
    route: (method, path) => {
      // A literal route wins over a parameter at the same place (`/v1/agents/validate` is not `/v1/agents/:id`).
      let found: string | undefined
      for (const shape of shapes) {
        if ((shape.method !== method && shape.method !== "*") || !shape.pattern.test(path)) continue
        if (found === undefined || literalLength(shape.template) > literalLength(found)) found = shape.template
      }
      return found
    },
    allowedMethods: (path) => shapes.filter((s) => s.pattern.test(path)).map((s) => s.method)
  }
}

const escape = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const literalLength = (template: string): number => template.replace(/:[A-Za-z]+/g, "").length
