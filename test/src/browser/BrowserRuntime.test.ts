/**
 * When `capabilities.browser` is refused with managed_browser_unconfigured:
 * no Chromium on the host, no managed workspace with a filesystem, or a
 * `small` workspace (the browser's threads would take its process limit).
 */
import { assert, describe, it } from "@effect/vitest"
import type { AgentConfig } from "../../../domain/Agent.ts"
import { browserRefusal } from "../../../src/browser/BrowserRuntime.ts"

const rows: ReadonlyArray<
  readonly [string, AgentConfig["workspace"], boolean, string | undefined, AgentConfig["capabilities"]["browser"]?]
> = [
  ["a managed workspace on a host with Chromium", { type: "managed" }, true, undefined],
  ["a large managed workspace", { type: "managed", resources: "large" }, true, undefined],
  [
    "no Chromium on the host",
    { type: "managed" },
    false,
    "The browser capability needs Chromium on the host (/usr/lib/chromium/chromium, Debian's chromium package); this deployment has none."
  ],
  [
    "no workspace",
    null,
    true,
    "The browser capability needs a managed workspace with a filesystem (workspace: { type: 'managed' }): the browser runs in its sandbox."
  ],
  [
    "a managed workspace without a filesystem",
    { type: "managed", filesystem: false },
    true,
    "The browser capability needs a managed workspace with a filesystem (workspace: { type: 'managed' }): the browser runs in its sandbox."
  ],
  [
    "a remote workspace",
    { type: "remote", environmentId: "env_1" },
    true,
    "The browser capability needs a managed workspace with a filesystem (workspace: { type: 'managed' }): the browser runs in its sandbox."
  ],
  [
    "an authenticated profile on a managed workspace (the profile is looked up at the run's first browser call)",
    { type: "managed" },
    true,
    undefined,
    { authenticated: { profileKey: "p" }, files: true }
  ],
  [
    "a small workspace",
    { type: "managed", resources: "small" },
    true,
    "The managed browser needs workspace.resources 'standard' or 'large': on 'small' its threads would take the workspace's whole process limit."
  ]
]

describe("browserRefusal", () => {
  for (const [name, workspace, installed, refused, browser] of rows) {
    it(
      name,
      () => assert.strictEqual(browserRefusal(browser ?? { tabs: true, files: true }, workspace, installed), refused)
    )
  }
})
