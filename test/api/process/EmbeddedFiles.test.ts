/**
 * `npm start` on the embedded database (PGlite): the default artifact store
 * keeps file bytes in PGlite's bytea, whole and exact, across a kill -9.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { FileObject } from "../../../domain/Artifact.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { freePort } from "../../support/TestServer.ts"
import { everyByte } from "../../support/Uploads.ts"

const key = "sk_embedded_files"

describe("files on the embedded database", () => {
  it.live("an upload's bytes survive a kill -9 and come back identical", () =>
    Effect.gen(function*() {
      const dataDir = yield* ServiceProcess.tempDataDir("svc-embedded-files-")
      const env = {
        SVC_DATA_DIR: dataDir,
        PORT: String(yield* freePort),
        SVC_QUIET: "1",
        SVC_API_KEYS: `${key}:org_e:prod`
      }
      const data = everyByte(4096)
      const first = yield* ServiceProcess.start(env)
      const uploaded = yield* Effect.promise(async () => {
        const body = new FormData()
        body.append("file", new Blob([data]), "every-byte.bin")
        const response = await fetch(`${first.url}/v1/files`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}` },
          body
        })
        return { status: response.status, text: await response.text() }
      })
      assert.strictEqual(uploaded.status, 200, uploaded.text)
      const file = ServiceProcess.decodeJson(FileObject, uploaded.text)
      assert.strictEqual(file.bytes, data.length)
      yield* ServiceProcess.stop(first, "SIGKILL")

      const second = yield* ServiceProcess.start(env)
      const content = yield* Effect.promise(async () => {
        const response = await fetch(`${second.url}/v1/files/${file.id}/content`, {
          headers: { authorization: `Bearer ${key}` }
        })
        return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) }
      })
      assert.strictEqual(content.status, 200)
      assert.isTrue(Buffer.from(content.bytes).equals(Buffer.from(data)))
      yield* ServiceProcess.stop(second)
    }).pipe(Effect.scoped), 90_000)
})
