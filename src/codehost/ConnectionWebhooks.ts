/**
 * GitHub's installation webhooks (`POST /v1/codehost-connections/webhooks`, no
 * API key): the body's `X-Hub-Signature-256` is verified with
 * `@octokit/webhooks` against SVC_GITHUB_WEBHOOK_SECRET, then the events
 * update every connection bound to the installation, as a sync would:
 *
 * - `installation` `deleted`: revoked (uninstalled); `suspend`: revoked;
 *   `unsuspend`: ready again.
 * - `installation_repositories` `removed`: those repositories leave the
 *   selection and every grant; `added`: they become grantable (never granted).
 *
 * Other events and actions are acknowledged and ignored.
 */
import { Webhooks } from "@octokit/webhooks"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import type { ConnectionState } from "../../domain/Codehost.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import type { Principal } from "../../domain/Principal.ts"
import { CodehostRepo } from "../store/CodehostRepo.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { nowIso } from "../Time.ts"
import { intersect } from "./ConnectionRules.ts"
import { CodehostConnections } from "./Connections.ts"

const Repos = Schema.optionalKey(Schema.Array(Schema.Struct({ full_name: Schema.String })))
const Payload = Schema.fromJsonString(Schema.Struct({
  action: Schema.String,
  installation: Schema.Struct({ id: Schema.Number }),
  repositories_added: Repos,
  repositories_removed: Repos
}))
type Payload = typeof Payload.Type

const invalid = (message: string) => InvalidRequest.of(message, undefined, "webhook_signature_invalid")

/** The state after one event, or undefined when the event changes nothing. */
const apply = (event: string, payload: Payload, s: ConnectionState, now: string): ConnectionState | undefined => {
  if (event === "installation") {
    switch (payload.action) {
      case "deleted":
        return {
          ...s,
          status: "revoked",
          statusReason: "The app was uninstalled from GitHub; authorize again with this connectionId to repair.",
          selected: [],
          lastSyncedAt: now
        }
      case "suspend":
        return {
          ...s,
          status: "revoked",
          statusReason: "The installation is suspended on GitHub; unsuspend it, then sync.",
          lastSyncedAt: now
        }
      case "unsuspend":
        return s.status === "revoked" ? { ...s, status: "ready", statusReason: null, lastSyncedAt: now } : undefined
      default:
        return undefined
    }
  }
  if (event !== "installation_repositories") return undefined
  const removed = (payload.repositories_removed ?? []).map((r) => r.full_name.toLowerCase())
  const added = (payload.repositories_added ?? []).map((r) => r.full_name)
  const selected = [
    ...s.selected.filter((r) => !removed.includes(r.toLowerCase())),
    ...added.filter((r) => !s.selected.some((x) => x.toLowerCase() === r.toLowerCase()))
  ]
  return {
    ...s,
    selected,
    access: { ...s.access, repositories: [...intersect(s.access.repositories, selected)] },
    lastSyncedAt: now
  }
}

const make = Effect.gen(function*() {
  const connections = yield* CodehostConnections
  const repo = yield* CodehostRepo
  const store = yield* ResourceStore

  const receive = Effect.fn("CodehostWebhooks.receive")(function*(event: string, signature: string, body: string) {
    const gh = yield* connections.app
    const webhooks = new Webhooks({ secret: Redacted.value(gh.config.webhookSecret) })
    const verified = yield* Effect.promise(() => webhooks.verify(body, signature).catch(() => false))
    if (!verified) {
      return yield* invalid(
        "The webhook's X-Hub-Signature-256 does not match its body under the configured webhook secret."
      )
    }
    const payload = yield* Schema.decodeUnknownEffect(Payload)(body).pipe(Effect.option)
    if (Option.isNone(payload)) return { received: true as const, updated: 0 }
    const updated: Array<string> = []
    for (const id of yield* repo.byInstallation(payload.value.installation.id)) {
      const row = yield* store.find("codehost_connections", id)
      if (Option.isNone(row)) continue
      const principal: Principal = {
        keyId: "codehost-webhook",
        organizationId: row.value.organizationId,
        workspaceId: row.value.workspaceId
      }
      const loaded = yield* connections.crud.load(principal, id).pipe(Effect.orDie)
      const next = apply(event, payload.value, loaded.config, yield* nowIso)
      if (next === undefined) continue
      yield* connections.save(principal, loaded, next).pipe(Effect.orDie)
      updated.push(id)
    }
    return { received: true as const, updated: updated.length }
  })

  return { receive }
})

export class CodehostWebhooks
  extends Context.Service<CodehostWebhooks, Effect.Success<typeof make>>()("svc/CodehostWebhooks")
{
  static readonly layer = Layer.effect(CodehostWebhooks)(make).pipe(
    Layer.provide([CodehostRepo.layer, ResourceStore.layer])
  )
}
