/**
 * GitHub's OAuth token endpoint (`<web>/login/oauth/access_token`) for the
 * installing person's grant: a code exchanged at the callback, and a refresh
 * token exchanged for a new pair when the user token expired (GitHub App
 * user tokens last 8 hours, their refresh tokens 6 months, single use).
 * GitHub answers a refusal with status 200 and an `error`: that is a definite
 * failure (401 here); an unreachable GitHub is status 0, as everywhere.
 */
import type { Octokit } from "@octokit/rest"
import { Effect, Option, Redacted, Schema } from "effect"
import type { GitHubAppConfig } from "./CodehostConfig.ts"
import { call, GitHubFailed, withoutCredentials } from "./GitHubCall.ts"

/** A user token GitHub issued, with its refresh token and their lifetimes when it expires. */
export interface Issued {
  readonly access: Redacted.Redacted
  readonly refresh: Redacted.Redacted | undefined
  readonly expiresInSec: number | undefined
  readonly refreshExpiresInSec: number | undefined
}

const Answer = Schema.Struct({
  access_token: Schema.optionalKey(Schema.String),
  refresh_token: Schema.optionalKey(Schema.String),
  expires_in: Schema.optionalKey(Schema.Number),
  refresh_token_expires_in: Schema.optionalKey(Schema.Number),
  error: Schema.optionalKey(Schema.String),
  error_description: Schema.optionalKey(Schema.String)
})
const decodeAnswer = Schema.decodeUnknownOption(Answer)

export type Grant =
  | { readonly code: string }
  | { readonly grant_type: "refresh_token"; readonly refresh_token: string }

/** Exchanges `grant` at the token endpoint; `refused` opens the message of a refusal. */
export const exchange =
  (request: Octokit["request"], config: GitHubAppConfig) =>
  (grant: Grant, refused: string): Effect.Effect<Issued, GitHubFailed> =>
    call((signal) =>
      request(`POST ${config.webUrl}/login/oauth/access_token`, {
        client_id: config.clientId,
        client_secret: Redacted.value(config.clientSecret),
        ...grant,
        headers: { accept: "application/json" },
        request: { signal }
      })
    ).pipe(
      Effect.flatMap(({ data }: { readonly data: unknown }) => {
        const answer = Option.getOrUndefined(decodeAnswer(data))
        if (answer?.access_token !== undefined && answer.access_token !== "") {
          return Effect.succeed<Issued>({
            access: Redacted.make(answer.access_token),
            refresh: answer.refresh_token === undefined || answer.refresh_token === ""
              ? undefined
              : Redacted.make(answer.refresh_token),
            expiresInSec: answer.expires_in,
            refreshExpiresInSec: answer.refresh_token_expires_in
          })
        }
        const reason = answer?.error_description ?? answer?.error ?? "no access token"
        return Effect.fail(new GitHubFailed({ status: 401, message: `${refused}: ${reason}` }))
      }),
      // GitHub's text may repeat what it was sent: the client secret, the code, the refresh token.
      Effect.mapError((e) =>
        new GitHubFailed({
          status: e.status,
          message: withoutCredentials(e.message, [Redacted.value(config.clientSecret)])
        })
      )
    )
