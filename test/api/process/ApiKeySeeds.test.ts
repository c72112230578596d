/**
 * SVC_API_KEYS across restarts of a service process (embedded storage): the
 * fourth field makes an admin; a key removed from the list is revoked at the
 * next start and valid again once listed again; a key revoked through the API
 * stays revoked though still listed (a warning says so); an organization that
 * is not `org_...` stops the start with a message naming the setting; the
 * embedded default's development key is an admin.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ApiKey, ApiKeyCreated } from "../../../domain/ApiKey.ts"
import { Page } from "../../../domain/Page.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { freePort } from "../../support/TestServer.ts"

const admin = "sk_seeds_admin_key"
const member = "sk_seeds_member_key"
const other = "sk_seeds_other_key"

const KeyPage = Page(ApiKey)

const startWith = (dataDir: string, apiKeys: string) =>
  Effect.flatMap(
    freePort,
    (port) => ServiceProcess.start({ SVC_DATA_DIR: dataDir, SVC_API_KEYS: apiKeys, PORT: String(port) })
  )

/** The status of `GET /v1/agents` with `key`: 200, or 401 once it is revoked. */
const statusOf = (url: string, key: string) =>
  Effect.map(ServiceProcess.request(url, "GET", "/v1/agents", key), (reply) => reply.status)

const keysOf = (url: string) =>
  Effect.map(
    ServiceProcess.request(url, "GET", "/v1/api-keys?limit=100", admin),
    (reply) => ServiceProcess.decodeJson(KeyPage, reply.text).data
  )

describe("SVC_API_KEYS across restarts", () => {
  it.live(
    "the role field, removal revoking at the next start, a revocation through the API that stays",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* ServiceProcess.tempDataDir("svc-seeds-")
        const all = `${admin}:org_seeds:prod:admin,${member}:org_seeds:prod,${other}:org_seeds:ops:member`

        const first = yield* startWith(dataDir, all)
        assert.deepStrictEqual(
          (yield* keysOf(first.url)).map((k) => [k.name, k.workspace, k.role, k.revokedAt]).sort(),
          [
            ["SVC_API_KEYS", "ops", "member", null],
            ["SVC_API_KEYS", "prod", "admin", null],
            ["SVC_API_KEYS", "prod", "member", null]
          ]
        )
        const denied = yield* ServiceProcess.request(first.url, "GET", "/v1/api-keys", member)
        assert.strictEqual(denied.status, 403, denied.text)
        // The admin revokes `other` through the API.
        const otherId = (yield* keysOf(first.url)).find((k) => k.workspace === "ops")?.id ?? ""
        const revoked = yield* ServiceProcess.request(first.url, "POST", `/v1/api-keys/${otherId}/revoke`, admin)
        assert.strictEqual(revoked.status, 200, revoked.text)
        yield* ServiceProcess.stop(first)

        // `member` left SVC_API_KEYS; `other` is still listed but was revoked through the API.
        const second = yield* startWith(dataDir, `${admin}:org_seeds:prod:admin,${other}:org_seeds:ops`)
        assert.include(
          second.output(),
          "SVC_API_KEYS entry 2 is a key revoked through the API: it stays revoked. Remove it from SVC_API_KEYS."
        )
        assert.deepStrictEqual(
          [yield* statusOf(second.url, admin), yield* statusOf(second.url, member), yield* statusOf(second.url, other)],
          [200, 401, 401]
        )
        const memberKey = (yield* keysOf(second.url)).find((k) => k.workspace === "prod" && k.role === "member")
        assert.isString(memberKey?.revokedAt)
        yield* ServiceProcess.stop(second)

        // Listed again: `member` is valid again; `other` stays revoked.
        const third = yield* startWith(dataDir, all)
        assert.deepStrictEqual(
          [yield* statusOf(third.url, admin), yield* statusOf(third.url, member), yield* statusOf(third.url, other)],
          [200, 200, 401]
        )
        yield* ServiceProcess.stop(third)
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "an organization that is not org_... stops the start, naming the setting and never the key",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* ServiceProcess.tempDataDir("svc-seeds-org-")
        const refused = yield* Effect.flip(startWith(dataDir, `${admin}:org_ok:prod,sk_secret_value_9:acme:prod`))
        assert.include(
          refused.message,
          "SVC_API_KEYS entry 2: organization 'acme' is not an organization id: org_ then letters, digits, '_' or '-' (write org_acme)"
        )
        assert.notInclude(refused.message, "sk_secret_value_9")
      }).pipe(Effect.scoped),
    90_000
  )

  it.live("the embedded default's development key is an admin of org_default", () =>
    Effect.gen(function*() {
      const dataDir = yield* ServiceProcess.tempDataDir("svc-seeds-dev-")
      const service = yield* startWith(dataDir, "")
      const devKey = /\n\s+(sk_[0-9A-Za-z]+)\n/.exec(service.output())?.[1] ?? ""
      assert.match(service.output(), /organization org_default, workspace default, role admin/)
      const created = yield* ServiceProcess.request(service.url, "POST", "/v1/api-keys", devKey, { name: "mine" })
      assert.strictEqual(created.status, 200, created.text)
      const key = ServiceProcess.decodeJson(ApiKeyCreated, created.text)
      assert.deepStrictEqual([key.workspace, key.role], ["default", "member"])
      assert.strictEqual(yield* statusOf(service.url, key.key), 200)
      const listed = yield* ServiceProcess.request(service.url, "GET", "/v1/api-keys", devKey)
      assert.deepStrictEqual(
        ServiceProcess.decodeJson(KeyPage, listed.text).data.map((k) => [k.name, k.role]),
        [["mine", "member"], ["development key", "admin"]]
      )
      yield* ServiceProcess.stop(service)
    }).pipe(Effect.scoped), 90_000)
})
