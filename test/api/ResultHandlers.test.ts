/**
 * Result handlers (spec 4.5, 7): the CRUD cases every registered resource
 * shares and those of signed webhooks (CrudSuite, CrudWebhooks), with the
 * handler's own error codes for its kind and its secret. Its deliveries:
 * ResultDispatch.
 */
import { Effect } from "effect"
import type { ResultHandler } from "../../domain/ResultHandler.ts"
import * as Collection from "../support/Collection.ts"
import { crudSuite } from "../support/CrudSuite.ts"
import { crudWebhooks, type WebhookResource } from "../support/CrudWebhooks.ts"
import { resourceRoutes } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

const invalidKind = "result_handler_invalid_kind"
const secretMissing = "result_handler_secret_missing"

const resultHandlers: WebhookResource<ResultHandler, never> = {
  collection: Collection.resultHandlers,
  object: "result_handler",
  idPattern: /^rh_[0-9A-Za-z]+$/,
  notFound: { code: "result_handler_not_found", id: "rh_doesnotexist0000000000" },
  routes: resourceRoutes(Collection.resultHandlers.path, { name: "renamed" }, [["rotate-secret", {
    secret: "rh_rotated_signing_secret"
  }]]),
  // Registration never connects to the URL, so any loopback port does (private URLs are allowed here).
  body: (overrides) =>
    Effect.succeed({
      kind: "artifact",
      name: "archive",
      url: "http://127.0.0.1:9/artifacts",
      secret: "rh_secret_first_signing_secret",
      ...overrides
    }),
  answer: ({ secret: _secret, ...body }) => ({ requestTimeoutMs: 30_000, ...body }),
  requestTimeout: { default: 30_000, max: 300_000 },
  update: {
    all: { name: "renamed", url: "http://127.0.0.1:10/v2", requestTimeoutMs: 60_000 },
    one: { url: "http://127.0.0.1:11/v3" },
    refused: { body: { url: "not a url" }, field: "url", code: "url_not_allowed" }
  },
  versions: {
    noop: (body) => ({ name: body["name"], url: body["url"] }),
    steps: [{ url: "http://127.0.0.1:12/v4" }, { name: "archive-2" }, { requestTimeoutMs: 5_000 }]
  },
  references: {
    // Exports, or oversized tool results.
    agents: [
      (id) => ({ artifacts: { exports: { resultHandlerId: id } } }),
      (id) => ({ artifacts: { oversizedToolResults: { resultHandlerId: id } } })
    ],
    drop: { artifacts: null }
  },
  full: { name: "drive", requestTimeoutMs: 45_000, metadata: { dest: "drive", env: "prod" } },
  refusals: [
    { label: "a missing kind", omit: "kind", field: "kind", code: invalidKind },
    ...["webhook", "Artifact", "", null, 1].map((kind) => ({
      label: `kind ${JSON.stringify(kind)}`,
      set: { kind },
      field: "kind",
      code: invalidKind
    })),
    { label: "a missing secret", omit: "secret", field: "secret", code: secretMissing },
    { label: "an empty secret", set: { secret: "" }, field: "secret", code: secretMissing }
  ],
  refusedRotations: [
    { body: {}, field: "secret", code: secretMissing },
    { body: { secret: "" }, field: "secret", code: secretMissing }
  ]
}

TestServer.suite()("result handlers", (it) => {
  crudSuite(it, resultHandlers)
  crudWebhooks(it, resultHandlers)
})
