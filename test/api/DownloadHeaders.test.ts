/**
 * Every route that answers stored bytes (a file's content, an artifact, a
 * signed artifact URL) serves them as a download that cannot run on the
 * API's origin: an HTML page a client uploaded or a model exported comes back
 * with `Content-Disposition: attachment`, a sandboxing Content-Security-Policy
 * and `nosniff`, exactly.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import type { Principal } from "../../domain/Principal.ts"
import { Artifacts } from "../../src/artifacts/Artifacts.ts"
import * as TestServer from "../support/TestServer.ts"
import { download, upload } from "../support/Uploads.ts"

/** Key a's caller (org_acme / prod), as the service sees it. */
const prod: Principal = { keyId: "key_a", organizationId: "org_acme", workspaceId: "prod" }

/** A page that would read what its origin keeps, were it ever run there. */
const page =
  `<!doctype html><script>fetch("/v1/agents",{headers:{authorization:"Bearer "+sessionStorage.getItem("svc-console-api-key")}})</script>`

/** What every download carries besides its media type and length. */
const downloadHeaders = (filename: string) => ({
  "content-disposition": `attachment; filename="${filename}"; filename*=UTF-8''${filename}`,
  "content-security-policy": "default-src 'none'; sandbox",
  "x-content-type-options": "nosniff",
  "cache-control": "private, no-store"
})

TestServer.suite()("downloads", (it) => {
  it.effect("files, artifacts and signed artifact URLs serve HTML as an attachment under a sandboxing CSP, with nosniff", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const artifacts = yield* Artifacts
      const file = yield* upload({ filename: "page.html", type: "text/html", data: page })
      const artifact = yield* artifacts.put({
        owner: prod,
        threadId: null,
        kind: "export",
        filename: "report.html",
        mediaType: "text/html",
        data: new TextEncoder().encode(page)
      })
      const signed = (yield* artifacts.signedUrl(artifact.id, 60_000)).replace("http://svc.test", api.url)
      const routes = [
        { url: `/v1/files/${file.id}/content`, key: undefined, filename: "page.html", mediaType: file.mediaType },
        { url: `/v1/artifacts/${artifact.id}`, key: undefined, filename: "report.html", mediaType: "text/html" },
        { url: signed, key: null, filename: "report.html", mediaType: "text/html" }
      ] as const
      for (const route of routes) {
        const served = yield* download(route.url, route.key)
        assert.strictEqual(served.status, 200, route.url)
        assert.strictEqual(new TextDecoder().decode(served.bytes), page, route.url)
        const seen = Object.fromEntries(
          Object.keys(downloadHeaders(route.filename)).map((name) => [name, served.headers.get(name)])
        )
        assert.deepStrictEqual(seen, downloadHeaders(route.filename), route.url)
        assert.strictEqual(served.headers.get("content-type"), route.mediaType, route.url)
      }
    }))
})
