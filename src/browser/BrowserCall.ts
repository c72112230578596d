/** The context a browser tool runs in: the run's browser, the call, the workspace's network rules, files and export routes. */
import type { DeliveryOptions } from "../artifacts/Deliverable.ts"
import type { CallRef, FileAccess } from "../tools/ToolFamily.ts"
import type { EgressRules } from "../workspace/NetworkPolicy.ts"
import type { BrowserSession } from "./BrowserSession.ts"

export interface BrowserCall {
  readonly session: BrowserSession
  readonly call: CallRef
  /** The workspace's network policy, as its egress proxy applies it. */
  readonly rules: EgressRules
  /** The workspace's files (uploads, exported downloads); undefined without `files`. */
  readonly files: FileAccess | undefined
  /**
   * Screenshots are stored; `handlerId` is set only when exports.include.browserScreenshots is true.
   * Undefined: there is nowhere to keep them (the PNG is described, not stored).
   */
  readonly screenshots: DeliveryOptions | undefined
  /** Downloads are exported when exports.include.browserDownloads is true (`handlerId` set). */
  readonly downloads: DeliveryOptions | undefined
  /** The largest file uploaded or exported. */
  readonly maxBytes: number
}
