/**
 * The typed client of the whole API, derived from the contract the server
 * serves (http/Api.ts) by `HttpApiClient`: one method per endpoint, requests
 * encoded and answers decoded with the server's own schemas, the error
 * envelopes typed per status. A route added to the contract is a method here
 * without further work. The API key travels as the contract's bearer
 * authentication, through the client side of its `Authentication` middleware.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "../http/Api.ts"
import { Authentication } from "../http/ApiMiddleware.ts"

/** Every endpoint of the API, grouped as the contract groups them (`api.agents.create`, `api.runs.get`, ...). */
export type ApiClient = HttpApiClient.ForApi<typeof Api>

export interface ConnectionOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  readonly apiKey: string | Redacted.Redacted<string>
}

/** Adds `Authorization: Bearer <key>` to every request of the typed client. */
export const bearer = (apiKey: string | Redacted.Redacted<string>) =>
  HttpApiMiddleware.layerClient(
    Authentication,
    ({ request, next }) =>
      next(HttpClientRequest.bearerToken(request, Redacted.isRedacted(apiKey) ? Redacted.value(apiKey) : apiKey))
  )

/** The typed client for `options`, over `fetch`. */
export const makeServiceClient = (options: ConnectionOptions): Effect.Effect<ApiClient> =>
  HttpApiClient.make(Api, { baseUrl: options.baseUrl }).pipe(
    Effect.provide([bearer(options.apiKey), FetchHttpClient.layer])
  )

export class ServiceClient extends Context.Service<ServiceClient, ApiClient>()("agent-service/ServiceClient") {
  static readonly layer = (options: ConnectionOptions): Layer.Layer<ServiceClient> =>
    Layer.effect(ServiceClient)(makeServiceClient(options))
}
