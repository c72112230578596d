/** Handlers of a thread's workspace files: the listing, and a file streamed as it is read. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { WorkspaceBrowser } from "../src/threads/WorkspaceBrowser.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { streamResponse } from "./BytesResponse.ts"

export const WorkspaceFilesHandlers = HttpApiBuilder.group(
  Api,
  "workspaceFiles",
  (handlers) =>
    Effect.map(WorkspaceBrowser, (browser) =>
      handlers
        .handle("list", ({ params, query }) => authed((p) => browser.list(p, params.id, query)))
        .handle("content", ({ params, query }) =>
          authed((p) => Effect.map(browser.open(p, params.id, query.path), (file) => streamResponse(file.body, file)))))
)
