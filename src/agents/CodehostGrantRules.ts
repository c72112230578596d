/**
 * The agent's code-hosting grant (spec 2.1.1 `codehost`, 4.1 rule 7, 4.8
 * "Agent grant") as a pure check: a managed workspace with filesystem, shell
 * and network; repositories as `owner/name`, each once; tool names from the
 * catalog, `allowedTools` and `blockedTools` exclusive; `gatedTools` only with
 * an explicit once/always mode and only naming write tools; branch names git
 * accepts. References (the connection, repositories within its grant) are
 * checked against the store by AgentReferences.
 */
import type { AgentConfig } from "../../domain/Agent.ts"
import { repositoryPattern } from "../../domain/Codehost.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import { entryOf } from "../codehost/CatalogNames.ts"
import { validBranch } from "../codehost/GitRefs.ts"

type Grant = NonNullable<AgentConfig["capabilities"]["codehost"]>

const field = "capabilities.codehost"

const checkNames = (
  list: ReadonlyArray<string> | undefined,
  key: string,
  writeOnly: boolean
): InvalidRequest | undefined => {
  for (const [i, name] of (list ?? []).entries()) {
    const entry = entryOf(name)
    if (entry === undefined) {
      return InvalidRequest.forField(
        `${field}.${key}[${i}]`,
        `'${name}' is not a code-hosting tool (names come from the catalog, e.g. 'codehost_get_issue').`
      )
    }
    if (writeOnly && !entry.write) {
      return InvalidRequest.forField(
        `${field}.${key}[${i}]`,
        `'${name}' is a read tool; gatedTools names write tools (reads need no approval).`
      )
    }
  }
  return undefined
}

export const checkCodehostGrant = (
  grant: Grant,
  workspace: AgentConfig["workspace"],
  configured: boolean
): InvalidRequest | undefined => {
  if (
    workspace === null || workspace.type !== "managed" || workspace.filesystem !== true || workspace.shell !== true ||
    workspace.network?.mode === "offline"
  ) {
    return InvalidRequest.forField(
      field,
      "The codehost capability requires a managed workspace with filesystem, shell and a network mode that is not offline."
    )
  }
  if (grant.allowedTools !== undefined && grant.blockedTools !== undefined) {
    return InvalidRequest.forField(`${field}.blockedTools`, "allowedTools and blockedTools are mutually exclusive.")
  }
  if (grant.gatedTools !== undefined && (grant.approval === undefined || grant.approval === "never")) {
    return InvalidRequest.forField(
      `${field}.gatedTools`,
      "gatedTools narrows an explicit 'once' or 'always' approval mode; set approval accordingly."
    )
  }
  if (!configured) {
    return InvalidRequest.forField(
      field,
      "No code-hosting app is configured on this deployment, so no code-hosting connection can back this capability.",
      "codehost_unconfigured"
    )
  }
  const seen = new Set<string>()
  for (const [i, repository] of (grant.repositories ?? []).entries()) {
    if (!repositoryPattern.test(repository)) {
      return InvalidRequest.forField(
        `${field}.repositories[${i}]`,
        `'${repository}' is not a repository name 'owner/name'.`
      )
    }
    if (seen.has(repository.toLowerCase())) {
      return InvalidRequest.forField(`${field}.repositories[${i}]`, `'${repository}' is listed twice.`)
    }
    seen.add(repository.toLowerCase())
  }
  const names = checkNames(grant.allowedTools, "allowedTools", false) ??
    checkNames(grant.blockedTools, "blockedTools", false) ??
    checkNames(grant.gatedTools, "gatedTools", true)
  if (names !== undefined) return names
  const prefix = grant.git?.branchPrefix
  if (prefix !== undefined && !validBranch(`${prefix}x`)) {
    return InvalidRequest.forField(`${field}.git.branchPrefix`, `'${prefix}' cannot start a branch name git accepts.`)
  }
  for (const [i, base] of (grant.git?.baseBranches ?? []).entries()) {
    if (!validBranch(base)) {
      return InvalidRequest.forField(`${field}.git.baseBranches[${i}]`, `'${base}' is not a branch name git accepts.`)
    }
  }
  return undefined
}
