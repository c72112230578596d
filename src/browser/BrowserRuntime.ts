/**
 * Whether a configuration can have the managed browser (spec 2.1.1
 * `browser`, 7 `managed_browser_unconfigured`): the host has Debian's
 * Chromium (read once when the service starts), and the agent has a managed
 * workspace with a filesystem on a class the browser fits in (BrowserLimits).
 * `authenticated.profileKey` names a stored profile (BrowserProfiles); one
 * that does not exist is a tool error at the run's first browser call.
 */
import { existsSync } from "node:fs"
import type { AgentConfig } from "../../domain/Agent.ts"
import { browserClass } from "./BrowserLimits.ts"
import { executable } from "./BrowserProcess.ts"

/** Chromium is installed on this host. */
export const browserInstalled: boolean = existsSync(executable)

/** Why `capabilities.browser` cannot be served for this workspace here, or undefined. */
export const browserRefusal = (
  _browser: NonNullable<AgentConfig["capabilities"]["browser"]>,
  workspace: AgentConfig["workspace"],
  installed = browserInstalled
): string | undefined => {
  if (!installed) {
    return `The browser capability needs Chromium on the host (${executable}, Debian's chromium package); this deployment has none.`
  }
  if (workspace === null || workspace.type !== "managed" || workspace.filesystem === false) {
    return "The browser capability needs a managed workspace with a filesystem (workspace: { type: 'managed' }): the browser runs in its sandbox."
  }
  if (browserClass(workspace.resources) === undefined) {
    return "The managed browser needs workspace.resources 'standard' or 'large': on 'small' its threads would take the workspace's whole process limit."
  }
  return undefined
}
