/** Handlers of browser profiles. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BrowserProfiles } from "../src/browser/BrowserProfiles.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"

export const BrowserProfilesHandlers = HttpApiBuilder.group(
  Api,
  "browserProfiles",
  (handlers) =>
    Effect.map(BrowserProfiles, (profiles) =>
      handlers
        .handle("list", ({ query }) => authed((p) => profiles.list(p, query)))
        .handle("put", ({ params, payload }) => authed((p) => profiles.put(p, params.profileKey, payload)))
        .handle("delete", ({ params }) => authed((p) => profiles.remove(p, params.profileKey))))
)
