/**
 * The tool family of `capabilities.browser` (spec 2.1.1): the ten page tools
 * always, `browser_tabs` with `tabs`, `browser_file_upload` (and downloads
 * saved under the workspace) with `files`. Opening the family starts nothing:
 * the browser starts on the run's first browser call (BrowserSession).
 */
import { Effect, type Scope } from "effect"
import type { DeliveryOptions } from "../artifacts/Deliverable.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import type { FileAccess, ToolFamily } from "../tools/ToolFamily.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import type { EgressRules } from "../workspace/NetworkPolicy.ts"
import type { Sandbox, Workspace } from "../workspace/Sandbox.ts"
import type { BrowserCall } from "./BrowserCall.ts"
import type { BrowserLimits } from "./BrowserLimits.ts"
import * as BrowserSession from "./BrowserSession.ts"
import * as T from "./BrowserTools.ts"

export interface BrowserOptions {
  readonly sandbox: Sandbox["Service"]
  readonly workspace: Workspace
  readonly limits: BrowserLimits
  readonly rules: EgressRules
  readonly tabs: boolean
  /** The workspace's files with `files` (uploads and downloads), else undefined. */
  readonly files: FileAccess | undefined
  /** Where screenshots and downloads go (BrowserCall); undefined: nowhere. */
  readonly screenshots: DeliveryOptions | undefined
  readonly downloads: DeliveryOptions | undefined
  readonly maxBytes: number
  readonly profile?: BrowserSession.SessionOptions["profile"]
}

const pageTools = [
  T.browserNavigate,
  T.browserNavigateBack,
  T.browserSnapshot,
  T.browserClick,
  T.browserType,
  T.browserPressKey,
  T.browserSelectOption,
  T.browserHover,
  T.browserWaitFor,
  T.browserTakeScreenshot
]

/** A failure of a browser call as the model reads it; a call that failed because a limit ended the browser says so. */
const failureOf = (error: { readonly _tag: string; readonly message: string; readonly code?: string }) => {
  switch (error._tag) {
    case "BrowserError":
      return ToolOutcome.failure(error.code ?? "browser_error", error.message)
    case "SpillFailed":
      return ToolOutcome.failure("workspace_error", error.message)
    default:
      return ToolOutcome.failure(error.code ?? "browser_error", error.message)
  }
}

export const open = Effect.fn("BrowserFamily.open")(function*(
  options: BrowserOptions
): Effect.fn.Return<ToolFamily, never, Scope.Scope> {
  const session = yield* BrowserSession.make({
    sandbox: options.sandbox,
    workspace: options.workspace,
    limits: options.limits,
    downloads: options.files !== undefined,
    ...(options.profile === undefined ? {} : { profile: options.profile })
  })
  const tools = [
    ...pageTools,
    ...(options.tabs ? [T.browserTabs] : []),
    ...(options.files === undefined ? [] : [T.browserFileUpload])
  ]
  return ToolDef.family(tools, {
    context: (call): BrowserCall => ({
      session,
      call,
      rules: options.rules,
      files: options.files,
      screenshots: options.screenshots,
      downloads: options.downloads,
      maxBytes: options.maxBytes
    }),
    // A call that failed because a limit ended the browser is told so (the next call starts a new one).
    around: (_name, _call, run) =>
      Effect.flatMap(run, (outcome) =>
        outcome.isError
          ? Effect.map(
            session.limitEnded,
            (limit) => limit === undefined ? outcome : ToolOutcome.failure("browser_limit", limit)
          )
          : Effect.succeed(outcome)),
    recover: (error) =>
      error._tag === "DeliveryFailed"
        ? ToolOutcome.failure(
          error.failed.code,
          `the artifact could not be delivered to the agent's artifact handler: ${error.failed.message}`
        )
        : failureOf(error)
  })
})
