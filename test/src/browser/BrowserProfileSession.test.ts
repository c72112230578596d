/**
 * Authenticated browser profiles on real Chromium in the real sandbox
 * (issue 30), stored on a real database: a page served here on loopback shows
 * "Logged in" only with the profile's cookie; the browser started with the
 * stored profile shows it logged in, a cookie the page sets during the run is
 * in the profile after the browser closes (read back through the store,
 * decrypted), and an agent whose profile does not exist gets a tool error
 * naming the key.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Scope } from "effect"
import { Exit } from "effect"
import { createServer } from "node:http"
import type { Principal } from "../../../domain/Principal.ts"
import * as BrowserFamily from "../../../src/browser/BrowserFamily.ts"
import { browserLimitsOf } from "../../../src/browser/BrowserLimits.ts"
import { BrowserProfiles } from "../../../src/browser/BrowserProfiles.ts"
import type { SessionOptions } from "../../../src/browser/BrowserSession.ts"
import { IdGenerator } from "../../../src/IdGenerator.ts"
import { parseMasterKey, SecretBox } from "../../../src/secrets/SecretBox.ts"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import type { ToolFamily } from "../../../src/tools/ToolFamily.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import type { EgressRules } from "../../../src/workspace/NetworkPolicy.ts"
import { aliceProfile } from "../../support/BrowserProfileFixture.ts"
import { DnsServer } from "../../support/DnsServer.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { proxiedWorkspace, sandboxLayer, testLimits } from "../../support/TestSandbox.ts"
import { testMasterKey } from "../../support/TestServer.ts"

/** "Logged in as <session>" with the session cookie, else "Not logged in"; every page sets `visited=yes`. */
const site = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
    const server = createServer((req, res) => {
      const session = /(?:^|; )session=([^;]+)/.exec(req.headers.cookie ?? "")?.[1]
      res.writeHead(200, {
        "content-type": "text/html",
        "set-cookie": "visited=yes; Path=/; Max-Age=86400; SameSite=Lax"
      })
      res.end(
        `<!doctype html><html><head><title>Site</title></head><body><h1>${
          session === undefined ? "Not logged in" : `Logged in as ${session}`
        }</h1></body></html>`
      )
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({ port, close: () => server.close() }))
    })
  }),
  (s) => Effect.sync(s.close)
)

const rules: EgressRules = {
  network: { mode: "restricted", allowDomains: ["site.test"] },
  allowPrivate: true,
  serviceHosts: []
}

const principal: Principal = { keyId: "key_test", organizationId: "org_acme", workspaceId: "prod" }

const masterKey = (() => {
  const parsed = parseMasterKey(testMasterKey)
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
})()

const Storage = Layer.unwrap(
  Effect.map(testDatabase, (db) =>
    BrowserProfiles.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(Migrations.layer, IdGenerator.layer)),
      Layer.provide(Layer.succeed(SecretBox)(SecretBox.make(masterKey, []))),
      Layer.provideMerge(Database.layerUrl(Redacted.make(db.url)))
    ))
)

const peers = Layer.mergeAll(sandboxLayer, DnsServer.layer({ "site.test": "127.0.0.1" }), Storage)

/** A run's browser family on a fresh sandboxed workspace, with `profile`; closed with `scope`. */
const browserWith = (id: string, profile: SessionOptions["profile"], scope: Scope.Scope) =>
  Effect.gen(function*() {
    const { sandbox, workspace } = yield* proxiedWorkspace(id, rules, { ...testLimits, processes: 256 })
    return yield* BrowserFamily.open({
      sandbox,
      workspace,
      limits: browserLimitsOf.standard,
      rules,
      tabs: false,
      files: undefined,
      screenshots: undefined,
      downloads: undefined,
      maxBytes: 1024 * 1024,
      ...(profile === undefined ? {} : { profile })
    })
  }).pipe(Scope.provide(scope))

const navigate = (family: ToolFamily, url: string): Effect.Effect<ToolOutcome> => {
  const running = family.call("browser_navigate", { url }, { id: "call_1", step: 1 })
  return running === undefined ? Effect.die(new Error("no browser_navigate")) : running
}

describe("authenticated browser profiles", () => {
  layer(peers, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect(
      "the stored cookie makes the page logged in; the page's new cookie is saved back when the browser closes",
      () =>
        Effect.gen(function*() {
          const server = yield* site
          const profiles = yield* BrowserProfiles
          yield* profiles.put(principal, "crm", aliceProfile)
          const scope = yield* Scope.make()
          const family = yield* browserWith("ws_profile", profiles.forRun(principal, "crm"), scope)
          const page = yield* navigate(family, `http://site.test:${server.port}/`)
          assert.isFalse(page.isError, page.text)
          assert.include(page.text, `heading "Logged in as alice" [level=1]`)
          // Not saved before the browser closes.
          const before = yield* profiles.read(principal, "crm")
          assert.deepStrictEqual(before?.cookies.map((c) => c.name), ["session"])
          yield* Scope.close(scope, Exit.void)

          const after = yield* profiles.read(principal, "crm")
          assert.deepStrictEqual(
            after?.cookies.map((c) => [c.name, c.value, c.domain]).sort(),
            [["session", "alice", "site.test"], ["visited", "yes", "site.test"]]
          )
          // Another workspace has no such profile.
          assert.isUndefined(yield* profiles.read({ ...principal, workspaceId: "staging" }, "crm"))
        }),
      120_000
    )

    it.effect("a profile that does not exist is a tool error naming the key", () =>
      Effect.gen(function*() {
        const server = yield* site
        const profiles = yield* BrowserProfiles
        const scope = yield* Scope.make()
        const family = yield* browserWith("ws_noprofile", profiles.forRun(principal, "missing-one"), scope)
        const page = yield* navigate(family, `http://site.test:${server.port}/`)
        assert.isTrue(page.isError)
        assert.include(page.text, "browser_profile_not_found")
        assert.include(page.text, "'missing-one'")
        yield* Scope.close(scope, Exit.void)
      }), 120_000)
  })
})
