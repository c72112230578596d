/**
 * What the host gives the sandbox for `workspace.documents` and
 * `workspace.mediaEditing` (spec 2.1.3), checked once at start
 * (ServiceConfig): the programs must be where the sandbox sees them (it binds
 * the host's /usr read-only, so /usr/local/bin, /usr/bin and /bin), and the
 * document worker's libraries readable by the workspaces' uids. A host
 * lacking one refuses the flag at create and validate
 * (`managed_documents_unconfigured`, `managed_media_editing_unconfigured`),
 * naming what is missing; the tests set the result through the config.
 */
import { accessSync, constants, statSync } from "node:fs"
import { join } from "node:path"
import { workerBindings } from "./DocumentRuntime.ts"

export interface RuntimeCheck {
  readonly available: boolean
  /** What the host lacks, e.g. `soffice (libreoffice-writer-nogui)`. */
  readonly missing: ReadonlyArray<string>
}

export interface HostRuntimes {
  readonly documents: RuntimeCheck
  readonly mediaEditing: RuntimeCheck
}

/** The sandbox's PATH (SandboxLive's baseEnv) without the merged-usr duplicates. */
const sandboxPath = ["/usr/local/bin", "/usr/bin", "/bin"]

/** Program -> the Debian package that has it (what the operator installs). */
export const documentPrograms: Readonly<Record<string, string>> = {
  soffice: "libreoffice-writer-nogui, libreoffice-calc-nogui, libreoffice-impress-nogui",
  pdftoppm: "poppler-utils",
  pdftotext: "poppler-utils",
  node: "nodejs (18 or later)"
}
export const mediaPrograms: Readonly<Record<string, string>> = {
  ffmpeg: "ffmpeg",
  ffprobe: "ffmpeg",
  convert: "imagemagick",
  sox: "sox"
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Readable and searchable by other users: the workspaces' uids bind it, not the service's. */
const readableByOthers = (path: string) => {
  try {
    return (statSync(path).mode & 0o005) === 0o005
  } catch {
    return false
  }
}

const check = (programs: Readonly<Record<string, string>>, more: ReadonlyArray<string> = []): RuntimeCheck => {
  const missing = [
    ...Object.entries(programs)
      .filter(([program]) => !sandboxPath.some((dir) => executable(join(dir, program))))
      .map(([program, pkg]) => `${program} (${pkg})`),
    ...more
  ]
  return { available: missing.length === 0, missing }
}

/** Looks at the host once (synchronous: a few stat calls). */
export const probe = (): HostRuntimes => {
  const libraries = workerBindings().filter(({ host }) => !readableByOthers(host)).map(({ host }) =>
    `${host} (readable by others)`
  )
  return { documents: check(documentPrograms, libraries), mediaEditing: check(mediaPrograms) }
}

/** A host with neither (what a deployment without them reports). */
export const none: HostRuntimes = {
  documents: { available: false, missing: Object.keys(documentPrograms) },
  mediaEditing: { available: false, missing: Object.keys(mediaPrograms) }
}

/**
 * `workspace.documents` or `workspace.mediaEditing` asked of a host that lacks their runtime: the
 * field, the spec's code and what is missing (AgentConfigRules refuses it at create, update and validate).
 */
export const runtimeRefusal = (
  workspace: { readonly documents?: boolean | undefined; readonly mediaEditing?: boolean | undefined },
  runtimes: HostRuntimes
): { readonly field: string; readonly message: string; readonly code: string } | undefined => {
  if (workspace.documents === true && !runtimes.documents.available) {
    return {
      field: "workspace.documents",
      message: `workspace.documents is set but this deployment's host lacks the document runtime: ${
        runtimes.documents.missing.join(", ")
      }.`,
      code: "managed_documents_unconfigured"
    }
  }
  if (workspace.mediaEditing === true && !runtimes.mediaEditing.available) {
    return {
      field: "workspace.mediaEditing",
      message: `workspace.mediaEditing is set but this deployment's host lacks the media-editing runtime: ${
        runtimes.mediaEditing.missing.join(", ")
      }.`,
      code: "managed_media_editing_unconfigured"
    }
  }
  return undefined
}
