/**
 * The browser family of one run (RunTools): on the run's managed workspace
 * (its sandbox and network rules), with the class's limits, the workspace's
 * files when `files` is on, and the export handler of each surface whose
 * flag is on (spec 2.1.2). A run without a managed workspace with files gets
 * none (the configuration is refused before: AgentConfigRules).
 */
import { Effect, type Scope } from "effect"
import type { ManagedWorkspace } from "../../domain/Agent.ts"
import type { BrowserPlan } from "../../domain/RunPlan.ts"
import type { DeliveryOptions } from "../artifacts/Deliverable.ts"
import type { ToolFamily } from "../tools/ToolFamily.ts"
import type { Sandbox } from "../workspace/Sandbox.ts"
import type { OpenedWorkspace } from "../workspace/ThreadWorkspaces.ts"
import * as BrowserFamily from "./BrowserFamily.ts"
import { browserClass, browserLimitsOf } from "./BrowserLimits.ts"
import type { SessionOptions } from "./BrowserSession.ts"

export interface BrowserRunOptions {
  readonly sandbox: Sandbox["Service"]
  readonly opened: OpenedWorkspace
  readonly spec: ManagedWorkspace
  readonly plan: BrowserPlan
  /** The run's delivery options; each surface's handler is set from the plan. */
  readonly delivery: Omit<DeliveryOptions, "handlerId">
  readonly maxBytes: number
  readonly profile: SessionOptions["profile"] | undefined
}

export const open = (options: BrowserRunOptions): Effect.Effect<ReadonlyArray<ToolFamily>, never, Scope.Scope> => {
  const { opened, plan, spec } = options
  const resources = browserClass(spec.resources)
  if (resources === undefined || spec.filesystem === false || opened.files === undefined) return Effect.succeed([])
  return Effect.map(
    BrowserFamily.open({
      sandbox: options.sandbox,
      workspace: opened.sandboxed.workspace,
      limits: browserLimitsOf[resources],
      rules: opened.sandboxed.rules,
      tabs: plan.tabs,
      files: plan.files ? opened.files : undefined,
      screenshots: { ...options.delivery, handlerId: plan.screenshotResultHandlerId },
      downloads: { ...options.delivery, handlerId: plan.downloadResultHandlerId },
      maxBytes: options.maxBytes,
      ...(options.profile === undefined ? {} : { profile: options.profile })
    }),
    (family) => [family]
  )
}
