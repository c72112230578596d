/**
 * A thread's history (`GET /v1/threads/:id/messages`) through the client: a
 * page of its messages as the AI SDK's `UIMessage`s, oldest first, or all of
 * them, which is what a chat starts from after a reload
 * (`useChat({ id: thread.id, messages, transport })`).
 */
import { Effect } from "effect"
import { PageLimits } from "../domain/Page.ts"
import type { ThreadMessage } from "../domain/ThreadMessage.ts"
import { ClientError } from "./Failures.ts"
import { ids, type PageOptions, pageQuery } from "./Inputs.ts"
import type { ApiClient } from "./ServiceClient.ts"

/** One page of the thread's messages. */
export const messagesPage = (api: ApiClient, threadId: string, options: PageOptions = {}) =>
  Effect.gen(function*() {
    const id = yield* ids.thread(threadId)
    const query = yield* pageQuery(options)
    const page = yield* api.threads.messages({ params: { id }, query })
    // The route answers 204 only to `warm=1`, which this never sends.
    if (page === undefined) {
      return yield* new ClientError({
        kind: "invalid_response",
        message: "The thread's messages came back empty (204)."
      })
    }
    return page
  })

/** Every message of the thread, oldest first, read a page of the largest size at a time. */
export const allMessages = (api: ApiClient, threadId: string) =>
  Effect.gen(function*() {
    const messages: Array<ThreadMessage> = []
    let cursor: string | undefined
    do {
      const page = yield* messagesPage(api, threadId, { limit: PageLimits.max, cursor })
      messages.push(...page.data)
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    return messages
  })
