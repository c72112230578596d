/**
 * What `workspace.resources` (spec 2.1.3: small, standard, large) means in
 * numbers. Every command of a workspace runs under these limits; going over
 * one ends that command (never the service) and the result says which limit.
 * How each is enforced is in the README ("Managed workspaces (foundation)").
 */
export type ResourceClass = "small" | "standard" | "large"

export interface Limits {
  /** CPU seconds of each process (RLIMIT_CPU; SIGXCPU at this, SIGKILL one second later). */
  readonly cpuSeconds: number
  /** Address space of each process (RLIMIT_AS). */
  readonly memoryBytes: number
  /** Processes of the workspace at once (RLIMIT_NPROC of the workspace's own host uid). */
  readonly processes: number
  /** Bytes of the workspace directory (measured with du while and after each command); also the largest single file (RLIMIT_FSIZE). */
  readonly diskBytes: number
  /** Size of the private /tmp (a tmpfs, so it counts against memory, not disk). */
  readonly tmpBytes: number
  /** Wall time of a command when the call gives none. */
  readonly defaultTimeoutMs: number
  /** The most a call may ask for. */
  readonly maxTimeoutMs: number
  /** Bytes kept of stdout and of stderr each; the rest is dropped and the result marked truncated. */
  readonly outputBytes: number
}

const MiB = 1024 * 1024
const GiB = 1024 * MiB

export const limitsOf: Record<ResourceClass, Limits> = {
  small: {
    cpuSeconds: 60,
    memoryBytes: 1 * GiB,
    processes: 64,
    diskBytes: 1 * GiB,
    tmpBytes: 64 * MiB,
    defaultTimeoutMs: 120_000,
    maxTimeoutMs: 300_000,
    outputBytes: 64 * 1024
  },
  standard: {
    cpuSeconds: 300,
    memoryBytes: 4 * GiB,
    processes: 256,
    diskBytes: 5 * GiB,
    tmpBytes: 256 * MiB,
    defaultTimeoutMs: 120_000,
    maxTimeoutMs: 600_000,
    outputBytes: 64 * 1024
  },
  large: {
    cpuSeconds: 900,
    memoryBytes: 8 * GiB,
    processes: 512,
    diskBytes: 20 * GiB,
    tmpBytes: 1 * GiB,
    defaultTimeoutMs: 120_000,
    maxTimeoutMs: 1_800_000,
    outputBytes: 64 * 1024
  }
}
