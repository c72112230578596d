/**
 * What the managed browser may use, by the workspace's resource class (spec
 * 2.1.3 `resources`), and how each bound is enforced (docs/guide/browser.md,
 * "Limits").
 *
 * Chromium cannot live under an address-space limit: V8 reserves hundreds of
 * GiB of virtual memory for its heap cages at start (it dies of SIGTRAP under
 * RLIMIT_AS of 16 GiB; measured with Debian's chromium 142), so the browser's
 * RLIMIT_AS is 1 TiB and its memory is bounded instead by the resident memory
 * of its process tree, measured by the service (`rssBytes`; over it, the
 * browser is killed). Processes and CPU time per process are the class's
 * rlimits. RLIMIT_NPROC counts every thread of the workspace's host uid, the
 * browser's and the commands' together, and a headless Chromium with two
 * tabs runs about 150 threads: on `small` (64) it could not start, or it
 * would leave commands none, so the browser needs `standard` or `large`
 * (`small` is refused at agent create and validate). The browser's profile
 * and cache live in its own /tmp, a tmpfs of `tmpBytes` that no command of
 * the workspace sees.
 */
import type { CommandLimits } from "../workspace/BwrapCommand.ts"
import type { ResourceClass } from "../workspace/ResourceClass.ts"

export interface BrowserLimits {
  readonly command: CommandLimits
  /** Resident memory of the browser's processes together; over it the browser is killed. */
  readonly rssBytes: number
  /** How often the resident memory is measured. */
  readonly checkIntervalMs: number
  /** How long an action (click, type, navigation, wait) may take. */
  readonly actionTimeoutMs: number
}

const MiB = 1024 * 1024
const GiB = 1024 * MiB
/** The address space a browser reserves: effectively no bound (see the header). */
export const addressSpaceBytes = 1024 * GiB

/** The classes a browser runs on (see the header). */
export type BrowserClass = Exclude<ResourceClass, "small">

/** The browser's class of a workspace's `resources` (default standard); undefined on `small`. */
export const browserClass = (resources: ResourceClass | undefined): BrowserClass | undefined =>
  resources === "small" ? undefined : resources ?? "standard"

export const browserLimitsOf: Record<BrowserClass, BrowserLimits> = {
  standard: {
    command: {
      cpuSeconds: 600,
      memoryBytes: addressSpaceBytes,
      processes: 256,
      fileSizeBytes: 5 * GiB,
      tmpBytes: 512 * MiB
    },
    rssBytes: 2 * GiB,
    checkIntervalMs: 500,
    actionTimeoutMs: 30_000
  },
  large: {
    command: {
      cpuSeconds: 1_800,
      memoryBytes: addressSpaceBytes,
      processes: 512,
      fileSizeBytes: 20 * GiB,
      tmpBytes: 1 * GiB
    },
    rssBytes: 4 * GiB,
    checkIntervalMs: 500,
    actionTimeoutMs: 30_000
  }
}
