/**
 * Authorizing a code-hosting connection (spec 4.8 rules 1-2, 8 "30-minute
 * single-use URL"). `authorize` creates the connection (`pending`), or repairs
 * one (`connectionId`: same id, same agent bindings), and answers the install
 * URL `<web>/apps/<slug>/installations/new?state=<state>`. The state names the
 * connection, a random nonce and the expiry, signed (SecretBox, purpose
 * `codehost-state`) over those and the connection's organization and
 * workspace; its nonce is stored and claimed once. The callback (no API key:
 * the state is the grant) binds the installation only after GitHub shows,
 * with the consenting person's own OAuth token, that they can access it.
 */
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import type { Authorization, AuthorizationState, AuthorizeInput, ConnectionStatus } from "../../domain/Codehost.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import type { CodehostConnectionId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { CodehostRepo } from "../store/CodehostRepo.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { nowIso, toIso } from "../Time.ts"
import { authorizationStatus, bind, failed, initialState } from "./ConnectionRules.ts"
import { CodehostConnections, type LoadedConnection } from "./Connections.ts"
import { sealIssued } from "./UserTokens.ts"

const purpose = "codehost-state"
export const urlTtlMs = 30 * 60 * 1000
const stateShape = /^(chc_[0-9A-Za-z]{1,64})\.([0-9A-Za-z]{20,64})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/

const invalidState = (why: string) =>
  InvalidRequest.of(
    `This authorization link cannot be used: ${why}. Ask for a new one (POST /v1/codehost-connections/authorize with the connectionId).`,
    { field: "state" },
    "codehost_state_invalid"
  )

export interface CallbackOutcome {
  readonly connectionId: string
  readonly status: ConnectionStatus
  readonly statusReason: string | null
  readonly returnUrl: string | null
}

export interface CallbackQuery {
  readonly state?: string | undefined
  readonly code?: string | undefined
  readonly installation_id?: string | undefined
  readonly setup_action?: string | undefined
}

const make = Effect.gen(function*() {
  const connections = yield* CodehostConnections
  const repo = yield* CodehostRepo
  const store = yield* ResourceStore
  const box = yield* SecretBox
  const ids = yield* IdGenerator
  const config = yield* ServiceConfig
  const { crud, app, save } = connections

  /** A browser goes there after the callback: https (http too with SVC_ALLOW_PRIVATE_URLS=1), no credentials. */
  const checkReturnUrl = (raw: string | undefined): Effect.Effect<string | null, InvalidRequest> => {
    if (raw === undefined) return Effect.succeed(null)
    const url = URL.parse(raw)
    const schemeOk = url !== null &&
      (url.protocol === "https:" || (config.allowPrivateUrls && url.protocol === "http:"))
    return url === null || !schemeOk || url.username !== "" || url.password !== ""
      ? Effect.fail(
        InvalidRequest.forField(
          "returnUrl",
          "returnUrl must be an absolute https URL without credentials.",
          "url_not_allowed"
        )
      )
      : Effect.succeed(url.toString())
  }

  const authorize = Effect.fn("CodehostAuthorize.authorize")(function*(principal: Principal, input: AuthorizeInput) {
    const gh = yield* app
    const returnUrl = yield* checkReturnUrl(input.returnUrl)
    let loaded: LoadedConnection
    if (input.connectionId === undefined) {
      const created = yield* crud.create(principal, {
        name: input.name ?? "GitHub",
        config: initialState(returnUrl),
        metadata: {},
        sealed: null
      })
      loaded = yield* crud.load(principal, created.id)
    } else {
      const current = yield* crud.requireRef(principal, input.connectionId, "connectionId")
      const next = { ...current.config, returnUrl: returnUrl ?? current.config.returnUrl }
      yield* save(principal, current, next, input.name === undefined ? {} : { name: input.name })
      loaded = yield* crud.load(principal, input.connectionId)
    }
    const id = loaded.row.id
    const now = yield* Clock.currentTimeMillis
    const expiresSec = Math.floor((now + urlTtlMs) / 1000)
    const nonce = Redacted.value(yield* ids.secretToken("")).slice(0, 32)
    yield* repo.insertState(nonce, id, toIso(expiresSec * 1000), toIso(now))
    const message = `${id}.${nonce}.${expiresSec}`
    const signature = box.sign(purpose, `${message}.${loaded.row.organizationId}.${loaded.row.workspaceId}`)
    const answer: Authorization = {
      id,
      object: "codehost_authorization",
      status: "pending",
      url: gh.installUrl(`${message}.${signature}`),
      expiresAt: toIso(expiresSec * 1000)
    }
    return answer
  })

  const status = Effect.fn("CodehostAuthorize.status")(function*(principal: Principal, id: CodehostConnectionId) {
    yield* app
    const loaded = yield* crud.load(principal, id)
    const answer: AuthorizationState = {
      id,
      object: "codehost_authorization",
      status: authorizationStatus(loaded.config),
      ...(loaded.config.status === "ready" ? { connection: crud.view(loaded) } : {})
    }
    return answer
  })

  /** The state's connection, once its signature, expiry and single use hold. */
  const redeem = (state: string | undefined) =>
    Effect.gen(function*() {
      const match = stateShape.exec(state ?? "")
      if (match === null) return yield* invalidState("it carries no valid state")
      const [, id, nonce, expires, signature] = match
      const row = yield* store.find("codehost_connections", id)
      if (Option.isNone(row)) return yield* invalidState("its connection no longer exists")
      const { organizationId, workspaceId } = row.value
      if (!box.verify(purpose, `${id}.${nonce}.${expires}.${organizationId}.${workspaceId}`, signature)) {
        return yield* invalidState("its signature does not hold")
      }
      if (Number(expires) * 1000 <= (yield* Clock.currentTimeMillis)) {
        return yield* invalidState("it expired (links work for 30 minutes)")
      }
      const claimed = yield* repo.claimState(nonce, yield* nowIso)
      if (Option.isNone(claimed) || claimed.value.connectionId !== id) {
        return yield* invalidState("it was already used, or a newer link replaced it")
      }
      const principal: Principal = { keyId: "codehost-callback", organizationId, workspaceId }
      return { principal, loaded: yield* crud.load(principal, claimed.value.connectionId) }
    })

  const callback = Effect.fn("CodehostAuthorize.callback")(function*(query: CallbackQuery) {
    const gh = yield* app
    const { principal, loaded } = yield* redeem(query.state)
    const outcome = (next: typeof loaded.config): CallbackOutcome => ({
      connectionId: loaded.row.id,
      status: next.status,
      statusReason: next.statusReason,
      returnUrl: next.returnUrl
    })
    const settle = (next: typeof loaded.config, sealed?: LoadedConnection["row"]["sealed"]) =>
      Effect.as(save(principal, loaded, next, sealed === undefined ? {} : { sealed }), outcome(next))
    if (query.setup_action === "request") {
      return yield* settle({
        ...loaded.config,
        status: "action_required",
        statusReason:
          "An organization owner must approve the installation on GitHub; once approved, authorize again with this connectionId."
      })
    }
    const installationId = Number(query.installation_id ?? "")
    if (query.code === undefined || !Number.isSafeInteger(installationId) || installationId <= 0) {
      return yield* settle(
        failed(
          loaded.config,
          "GitHub returned without an installation and an authorization code; the app must request user authorization during installation."
        )
      )
    }
    const bound = yield* Effect.gen(function*() {
      const issued = yield* gh.exchangeCode(query.code ?? "")
      const token = issued.access
      const reachable = yield* gh.userInstallations(token)
      if (!reachable.includes(installationId)) {
        return failed(
          loaded.config,
          `The person who authorized cannot access installation ${installationId}; it was not bound.`
        )
      }
      const info = yield* gh.installation(installationId)
      if (Option.isNone(info)) {
        return failed(loaded.config, `Installation ${installationId} does not exist (it was removed).`)
      }
      const selected = yield* gh.repositories(installationId)
      const login = yield* gh.userLogin(token)
      // The person's token and its refresh token, sealed together; their expiry in the state.
      const { sealed, expiry } = yield* sealIssued(box, issued, yield* Clock.currentTimeMillis)
      return {
        next: bind(loaded.config, { installationId, info: info.value, selected, login, expiry, now: yield* nowIso }),
        sealed
      }
    }).pipe(
      Effect.catchTag(
        "GitHubFailed",
        (e) => Effect.succeed(failed(loaded.config, `GitHub refused the authorization: ${e.message}`))
      )
    )
    if ("sealed" in bound) return yield* settle(bound.next, bound.sealed)
    return yield* settle(bound)
  })

  return { authorize, status, callback }
})

export class CodehostAuthorize
  extends Context.Service<CodehostAuthorize, Effect.Success<typeof make>>()("svc/CodehostAuthorize")
{
  static readonly layer = Layer.effect(CodehostAuthorize)(make).pipe(
    Layer.provide([CodehostRepo.layer, ResourceStore.layer])
  )
}
