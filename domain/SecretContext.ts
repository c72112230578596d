/**
 * Secret contexts (spec 2.1.3, 2.5; resource not shown there): a named set of
 * projections of secrets into a destination. The one projection type is
 * `workspace_env`: the secret's value becomes environment variable `env` of
 * managed workspace commands and declared services of agents that list the
 * context in `workspace.secretContexts`.
 */
import { Schema } from "effect"
import { SecretContextId, SecretId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"

const opt = Schema.optionalKey

/**
 * Names the sandbox (or the host programs that start it) set or obey themselves: the dynamic
 * loader's and libc's (`LD_*`, `GLIBC_TUNABLES`, ...), the shell's, the locale's, PATH, HOME and
 * the proxy variables. A projection may not name them.
 */
const reservedEnvName =
  /^(?:LD_\w*|GLIBC_\w*|MALLOC_\w*|GCONV_PATH|LOCPATH|NLSPATH|HOSTALIASES|RES_OPTIONS|LOCALDOMAIN|TZDIR|TMPDIR|PATH|HOME|USER|SHELL|LANG|LANGUAGE|LC_\w*|BASH\w*|ENV|IFS|PS4|SHELLOPTS|(?:HTTPS?|NO|ALL)_PROXY)$/i

export const isReservedEnvName = (name: string): boolean => reservedEnvName.test(name)

export const EnvName = Schema.String.check(
  Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, {
    message:
      "env must be an environment variable name: a letter or '_' followed by letters, digits or '_' (at most 128)"
  }),
  Schema.makeFilter((name: string) =>
    isReservedEnvName(name)
      ? `env '${name}' is reserved: the sandbox sets it, or the programs that start it obey it (PATH, HOME, LD_*, LC_*, BASH*, proxy variables, ...)`
      : undefined
  )
)

export const WorkspaceEnvProjection = Schema.Struct({
  type: Schema.Literal("workspace_env"),
  secretId: SecretId,
  env: EnvName
}).annotate({ identifier: "WorkspaceEnvProjection" })

export const Projections = Schema.Array(WorkspaceEnvProjection).check(
  Schema.isMaxLength(100, { message: "at most 100 projections" })
)

const Name = Schema.String.check(Schema.isBetweenLength(1, 128, { message: "name must be 1 to 128 characters" }))

export const SecretContextCreate = Schema.Struct({
  name: Name,
  projections: Projections,
  metadata: opt(Metadata)
}).annotate({ identifier: "SecretContextCreate" })
export type SecretContextCreate = typeof SecretContextCreate.Type

export const SecretContextPatch = Schema.Struct({
  name: opt(Name),
  projections: opt(Projections),
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "SecretContextPatch" })
export type SecretContextPatch = typeof SecretContextPatch.Type

export const SecretContextConfig = Schema.Struct({ projections: Schema.Array(WorkspaceEnvProjection) })
export type SecretContextConfig = typeof SecretContextConfig.Type

export const SecretContext = Schema.Struct({
  id: SecretContextId,
  object: Schema.Literal("secret_context"),
  name: Schema.String,
  projections: Schema.Array(WorkspaceEnvProjection),
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "SecretContext" })
export type SecretContext = typeof SecretContext.Type
