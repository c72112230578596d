/**
 * Instruction files (spec 4.8 "Trust"): when the effective grant is one
 * repository, the files repositories keep for agents (AGENTS.md, agents.md,
 * CLAUDE.md, claude.md) on its default branch are read at the start of each
 * run and given to the model as context, each at most 32 KiB.
 */
import { Effect } from "effect"
import { call } from "./GitHubCall.ts"
import type { Scope } from "./ToolKit.ts"

export const instructionFiles = ["AGENTS.md", "agents.md", "CLAUDE.md", "claude.md"] as const
const maxBytes = 32 * 1024

export const loadInstructions = (scope: Scope, repository: string) =>
  Effect.gen(function*() {
    const [owner, repo] = repository.split("/")
    const gh = yield* scope.installation([repository], { contents: "read" })
    const found: Array<string> = []
    for (const path of instructionFiles) {
      const file = yield* call((signal) => gh.rest.repos.getContent({ owner, repo, path, request: { signal } })).pipe(
        Effect.option
      )
      if (file._tag === "None") continue
      const data = file.value.data
      if (Array.isArray(data) || !("content" in data) || typeof data.content !== "string" || data.path !== path) {
        continue
      }
      const text = Buffer.from(data.content, "base64").toString("utf8").slice(0, maxBytes)
      found.push(`Instructions from ${repository}/${path} (the repository's instruction file for agents):\n${text}`)
    }
    return found
  })
