/**
 * The documentation's links hold: every relative link of README.md, bench/README.md and
 * docs/**\/*.md names a file of this repository, every #anchor names a heading of its target page
 * (GitHub's slugs), and nothing points outside the repository (no http(s) or protocol-relative
 * links, no path above its root). A failure lists every broken link with its file and line.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const repositoryRoot = path.resolve(import.meta.dirname, "..", "..")

/** The pages the checker reads: the two READMEs and every page under docs/, as paths relative to `root`. */
const documentationPages = (root: string): ReadonlyArray<string> => {
  const pages = ["README.md", path.join("bench", "README.md")].filter((page) => fs.existsSync(path.join(root, page)))
  const docs = path.join(root, "docs")
  if (fs.existsSync(docs)) {
    for (const entry of fs.readdirSync(docs, { recursive: true, encoding: "utf8" })) {
      if (entry.endsWith(".md")) pages.push(path.join("docs", entry))
    }
  }
  return pages.sort()
}

interface Line {
  readonly number: number
  readonly text: string
}

/** The lines of a page outside fenced code blocks, with inline code spans blanked out. */
const proseLines = (markdown: string): ReadonlyArray<Line> => {
  const lines: Array<Line> = []
  let fence: string | undefined
  markdown.split("\n").forEach((text, index) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(text)
    if (fence !== undefined) {
      if (opening !== null && opening[1]!.startsWith(fence)) fence = undefined
      return
    }
    if (opening !== null) {
      fence = opening[1]!
      return
    }
    lines.push({ number: index + 1, text: text.replace(/(`+)[\s\S]*?\1/g, (span) => " ".repeat(span.length)) })
  })
  return lines
}

/** GitHub's heading anchor: lower case, punctuation dropped (but `-` and `_`), spaces to `-`. */
const slug = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

/** Every anchor a page offers: its headings' slugs (repeats numbered as GitHub does) and explicit ids. */
const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fence: string | undefined
  for (const text of markdown.split("\n")) {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(text)
    if (fence !== undefined) {
      if (opening !== null && opening[1]!.startsWith(fence)) fence = undefined
      continue
    }
    if (opening !== null) {
      fence = opening[1]!
      continue
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)
    if (heading !== null) {
      const base = slug(heading[1]!)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      anchors.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const id of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1]!)
  }
  return anchors
}

interface Link {
  readonly page: string
  readonly line: number
  readonly target: string
}

/** Inline links and images, reference definitions, autolinks and bare URLs of a page's prose. */
const linksOf = (page: string, markdown: string): ReadonlyArray<Link> => {
  const links: Array<Link> = []
  for (const { number, text } of proseLines(markdown)) {
    const add = (target: string) => links.push({ page, line: number, target })
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) add(match[1]!)
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(text)
    if (definition !== null) add(definition[1]!)
    for (const match of text.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]*)>/gi)) add(match[1]!)
    const withoutLinks = (definition === null ? text : "")
      .replace(/\]\([^)]*\)/g, "]")
      .replace(/<[a-z][a-z0-9+.-]*:[^>\s]*>/gi, "")
    for (const match of withoutLinks.matchAll(/\b(?:https?:\/\/|www\.)[^\s)>\]]+/gi)) add(match[0])
  }
  return links
}

/** Why a link is broken, or undefined when it resolves to a file (and heading) of the repository. */
const problemOf = (root: string, link: Link, anchorCache: Map<string, ReadonlySet<string>>): string | undefined => {
  const { target } = link
  if (target === "") return "empty link target"
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//") || /^www\./i.test(target)) {
    return "points outside the repository"
  }
  const hash = target.indexOf("#")
  const filePart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash))
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
  const file = filePart === ""
    ? path.join(root, link.page)
    : filePart.startsWith("/")
    ? path.join(root, filePart)
    : path.resolve(root, path.dirname(link.page), filePart)
  const relative = path.relative(root, file)
  if (relative.startsWith("..") || path.isAbsolute(relative)) return "escapes the repository root"
  if (!fs.existsSync(file)) return `no such file: ${relative}`
  if (anchor === undefined) return undefined
  if (!file.endsWith(".md")) return `an anchor on a page that is not markdown: ${relative}`
  let anchors = anchorCache.get(file)
  if (anchors === undefined) {
    anchors = anchorsOf(fs.readFileSync(file, "utf8"))
    anchorCache.set(file, anchors)
  }
  return anchors.has(anchor) ? undefined : `no heading #${anchor} in ${relative}`
}

/** Every broken link of the documentation under `root`, as `page:line: target (why)`. */
const brokenLinks = (root: string): ReadonlyArray<string> => {
  const anchorCache = new Map<string, ReadonlySet<string>>()
  const broken: Array<string> = []
  for (const page of documentationPages(root)) {
    for (const link of linksOf(page, fs.readFileSync(path.join(root, page), "utf8"))) {
      const problem = problemOf(root, link, anchorCache)
      if (problem !== undefined) broken.push(`${link.page}:${link.line}: ${link.target} (${problem})`)
    }
  }
  return broken
}

describe("documentation links", () => {
  it("README.md, bench/README.md and docs/ link only to files and headings of this repository", () => {
    const pages = documentationPages(repositoryRoot)
    assert.include(pages, "README.md")
    const broken = brokenLinks(repositoryRoot)
    assert.deepStrictEqual(broken, [], `broken documentation links:\n${broken.join("\n")}`)
  })

  it("reports every kind of broken link, and passes good ones", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "svc-doc-links-"))
    try {
      fs.mkdirSync(path.join(root, "docs", "guide"), { recursive: true })
      fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true })
      fs.writeFileSync(path.join(root, "bench", "results", "run.jsonl"), "{}\n")
      fs.writeFileSync(
        path.join(root, "docs", "guide", "agents.md"),
        [
          "# Agents",
          "## Create an agent (`POST /v1/agents`)",
          "## Limits",
          "## Limits",
          "See [runs](runs.md), [limits](#limits-1), [create](#create-an-agent-post-v1agents).",
          "[results](../../bench/results/run.jsonl) and [up](../../README.md#set-up)",
          "`[not a link](nowhere.md)` and a fence:",
          "```",
          "[also not a link](nowhere.md) http://127.0.0.1:8080",
          "```"
        ].join("\n")
      )
      fs.writeFileSync(
        path.join(root, "README.md"),
        [
          "# Title",
          "## Set up",
          "[guide](docs/guide/agents.md#limits) [gone](docs/guide/gone.md)",
          "[bad anchor](docs/guide/agents.md#no-such-heading) [self](#nowhere)",
          "[web](https://example.com) [proto](//example.com/x) <https://example.com/auto>",
          "[escape](../shared/spec.md) and a bare https://example.org/page",
          "[ref]: http://example.net"
        ].join("\n")
      )
      assert.deepStrictEqual(brokenLinks(root), [
        "README.md:3: docs/guide/gone.md (no such file: docs/guide/gone.md)",
        "README.md:4: docs/guide/agents.md#no-such-heading (no heading #no-such-heading in docs/guide/agents.md)",
        "README.md:4: #nowhere (no heading #nowhere in README.md)",
        "README.md:5: https://example.com (points outside the repository)",
        "README.md:5: //example.com/x (points outside the repository)",
        "README.md:5: https://example.com/auto (points outside the repository)",
        "README.md:6: ../shared/spec.md (escapes the repository root)",
        "README.md:6: https://example.org/page (points outside the repository)",
        "README.md:7: http://example.net (points outside the repository)",
        "docs/guide/agents.md:5: runs.md (no such file: docs/guide/runs.md)"
      ])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})
