/**
 * SVC_GITHUB_*: none set is "unconfigured"; a partial or malformed setting
 * stops the process with one message naming what is wrong; a full one
 * (the key inline with \n escapes, or from a file) gives the app's settings.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { readCodehostConfig } from "../../../src/codehost/CodehostConfig.ts"

const read = (env: Record<string, string>) =>
  readCodehostConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
const pem = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" })
  .toString()
const full = {
  SVC_GITHUB_APP_ID: "123",
  SVC_GITHUB_APP_SLUG: "svc-agents",
  SVC_GITHUB_CLIENT_ID: "Iv1.abc",
  SVC_GITHUB_CLIENT_SECRET: "client-secret",
  SVC_GITHUB_WEBHOOK_SECRET: "hook-secret",
  SVC_GITHUB_PRIVATE_KEY: pem.replaceAll("\n", "\\n")
}

describe("SVC_GITHUB_*", () => {
  it.effect("nothing set: unconfigured", () => Effect.map(read({}), (c) => assert.isTrue(Option.isNone(c))))

  it.effect("a full setting, with the defaults of the API and web URLs; the key from a file too", () =>
    Effect.gen(function*() {
      const app = Option.getOrThrow(yield* read(full))
      assert.deepStrictEqual([app.appId, app.slug, app.apiUrl, app.webUrl], [
        "123",
        "svc-agents",
        "https://api.github.com",
        "https://github.com"
      ])
      assert.strictEqual(Redacted.value(app.privateKey), pem)
      const file = join(tmpdir(), `svc-gh-key-${process.pid}.pem`)
      writeFileSync(file, pem)
      const { SVC_GITHUB_PRIVATE_KEY: _, ...rest } = full
      const fromFile = Option.getOrThrow(
        yield* read({
          ...rest,
          SVC_GITHUB_PRIVATE_KEY_FILE: file,
          SVC_GITHUB_API_URL: "https://ghe.example.com/api/v3/",
          SVC_GITHUB_WEB_URL: "https://ghe.example.com"
        })
      )
      assert.deepStrictEqual([Redacted.value(fromFile.privateKey), fromFile.apiUrl], [
        pem,
        "https://ghe.example.com/api/v3"
      ])
    }))

  it.effect.each(
    [
      [
        { SVC_GITHUB_APP_ID: "123" },
        "missing: SVC_GITHUB_APP_SLUG, SVC_GITHUB_CLIENT_ID, SVC_GITHUB_CLIENT_SECRET, SVC_GITHUB_WEBHOOK_SECRET, SVC_GITHUB_PRIVATE_KEY"
      ],
      [{ ...full, SVC_GITHUB_APP_ID: "abc" }, "SVC_GITHUB_APP_ID must be the app's numeric id"],
      [
        { ...full, SVC_GITHUB_PRIVATE_KEY: "not a key" },
        "SVC_GITHUB_PRIVATE_KEY must be the app's private key in PEM form"
      ],
      [{ ...full, SVC_GITHUB_PRIVATE_KEY_FILE: "/nope" }, "not both"],
      [{ ...full, SVC_GITHUB_WEB_URL: "ftp://x" }, "SVC_GITHUB_WEB_URL must be an http(s) URL"]
    ] as const
  )("%j is refused", ([env, message]) => Effect.map(Effect.flip(read(env)), (e) => assert.include(e.message, message)))
})
