/**
 * The fake GitHub itself: app JWTs are checked against the app's public key
 * (a JWT signed with another key is 401), installation tokens are narrowed to
 * what was asked and enforced (another repository, a missing permission: 403),
 * and its answers match GitHub's OpenAPI description.
 */
import { assert, it } from "@effect/vitest"
import { createAppAuth } from "@octokit/auth-app"
import { Octokit } from "@octokit/rest"
import { Effect } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as FakeGitHub from "../../support/github/FakeGitHub.ts"
import { validator } from "../../support/github/Shapes.ts"

const statusOf = (p: Promise<unknown>) => p.then(() => 200, (e: { status?: number }) => e.status ?? 0)

it.effect("JWTs, narrowed tokens and answer shapes", () =>
  Effect.gen(function*() {
    const gh = yield* FakeGitHub.start()
    gh.state.addRepo("o/one")
    gh.state.addRepo("o/two")
    const installation = gh.state.addInstallation("o", ["o/one", "o/two"])
    const app = (privateKey: string) =>
      new Octokit({ baseUrl: gh.apiUrl, authStrategy: createAppAuth, auth: { appId: gh.appId, privateKey } })
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
      type: "pkcs1",
      format: "pem"
    }).toString()
    assert.strictEqual(
      yield* Effect.promise(() => statusOf(app(other).rest.apps.getInstallation({ installation_id: installation.id }))),
      401
    )
    const ok = yield* Effect.promise(() =>
      app(gh.privateKey).rest.apps.getInstallation({ installation_id: installation.id })
    )
    assert.strictEqual(ok.data.account !== null && "login" in ok.data.account ? ok.data.account.login : "", "o")

    const auth = createAppAuth({
      appId: gh.appId,
      privateKey: gh.privateKey,
      request: new Octokit({ baseUrl: gh.apiUrl }).request
    })
    const { token } = yield* Effect.promise(() =>
      auth({
        type: "installation",
        installationId: installation.id,
        repositoryNames: ["one"],
        permissions: { issues: "read" }
      })
    )
    const client = new Octokit({ baseUrl: gh.apiUrl, auth: token })
    assert.strictEqual(
      yield* Effect.promise(() => statusOf(client.rest.issues.listForRepo({ owner: "o", repo: "one" }))),
      200
    )
    assert.strictEqual(
      yield* Effect.promise(() => statusOf(client.rest.issues.listForRepo({ owner: "o", repo: "two" }))),
      403
    )
    assert.strictEqual(
      yield* Effect.promise(() =>
        statusOf(client.rest.repos.getContent({ owner: "o", repo: "one", path: "README.md" }))
      ),
      403
    )

    const validate = validator()
    assert.deepStrictEqual(gh.answers.flatMap((a) => validate(a.method, a.path, a.status, a.body)), [])
    assert.deepStrictEqual(
      validate("GET", "/app/installations/{installation_id}", 200, { id: "not a number" }).length > 0,
      true
    )
  }).pipe(Effect.scoped), 60_000)
