/**
 * Interactions (approvals and questions) through the API as key a: those a
 * query lists (`runId=...`, `rootRunId=...`), those of a run still pending,
 * and every pending one of a run approved, as a person would.
 */
import { Effect } from "effect"
import { Interaction } from "../../domain/Interaction.ts"
import { Page } from "../../domain/Page.ts"
import * as TestServer from "./TestServer.ts"

const InteractionPage = Page(Interaction)

/** The interactions `query` lists: 200, decoded. */
export const interactions = (query: string) =>
  Effect.map(
    Effect.flatMap(
      TestServer.request("GET", `/v1/interactions?${query}`),
      (reply) => TestServer.expectOk(reply, 200, InteractionPage)
    ),
    (page) => page.data
  )

/** The run's interactions still waiting for a person. */
export const pendingOf = (runId: string) => interactions(`runId=${runId}&status=pending`)

/** Approves every pending interaction of the run (its `approve` option); answers those it approved. */
export const approveAll = (runId: string) =>
  Effect.gen(function*() {
    const pending = yield* pendingOf(runId)
    for (const p of pending) {
      yield* TestServer.request("POST", `/v1/interactions/${p.id}/resolve`, {
        body: { inputResponses: [{ requestId: p.id, optionId: "approve" }] }
      })
    }
    return pending
  })
