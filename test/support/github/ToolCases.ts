/**
 * Table-driven tests of code-hosting tools against the fake GitHub: each case
 * is one turn in which the scripted model calls one tool and then answers
 * with what it read (`Result: <tool result>`, without the untrusted-data
 * fence). A case says what the model reads (the result's JSON, fenced as
 * untrusted data or not, or the error line), checked on the run's
 * checkpointed conversation, which API requests GitHub received for it (token
 * mints aside), the body of the write it was asked to do, the permissions of
 * each token minted for it, and what GitHub holds afterwards.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { send, textOf, toolStep } from "../Conversation.ts"
import { toolReadsOf } from "../ModelReads.ts"
import { GitHub } from "./Harness.ts"

/** A value, or how to get it once the cases before it ran. */
export type Lazy<A> = A | (() => A)

const value = <A>(lazy: Lazy<A>): A => (typeof lazy === "function" ? (lazy as () => A)() : lazy)

export interface Case {
  readonly tool: string
  readonly input: Lazy<Readonly<Record<string, unknown>>>
  /** GitHub's side moving on before the call. */
  readonly before?: () => void
  /** What the model reads: the result (compared as JSON), or the error line `code: message`. */
  readonly reads: Lazy<unknown>
  /** The result reaches the model as untrusted data (fenced). */
  readonly fenced?: boolean
  /** The API requests GitHub received (`METHOD /api/v3/...?query`, decoded), token mints aside. */
  readonly sent: Lazy<ReadonlyArray<string>>
  /** The JSON body of the last request that had one. */
  readonly body?: Lazy<unknown>
  /** Each installation token minted for the call: the repositories and permissions it was narrowed to. */
  readonly tokens?: ReadonlyArray<readonly [ReadonlyArray<string>, Readonly<Record<string, string>>]>
  /** What GitHub holds afterwards. */
  readonly after?: () => void
}

const isApi = (line: string) => /^[A-Z]+ \/api\/(v3\/|graphql$)/.test(line) && !/\/access_tokens$/.test(line)

const fenceOf = (tool: string) => new RegExp(`^<untrusted_data source="${tool}">\\n([\\s\\S]*)\\n</untrusted_data>$`)

/** Runs the cases in order on `threadId` (an agent whose grant offers every tool named). */
export const run = (threadId: string, cases: ReadonlyArray<Case>) =>
  Effect.gen(function*() {
    const gh = yield* GitHub
    for (const c of cases) {
      c.before?.()
      const input = value(c.input)
      const label = `${c.tool} ${JSON.stringify(input)}`
      const marks = { requests: gh.requests.length, received: gh.received.length, minted: gh.state.minted.length }
      const { runId, parsed } = yield* send(threadId, toolStep(c.tool, input))
      const reads = yield* toolReadsOf(runId)
      assert.strictEqual(reads.length, 1, `${label}: ${JSON.stringify(reads)}`)
      const text = reads[0]
      const fenced = fenceOf(c.tool).exec(text)
      const expected = value(c.reads)
      if (typeof expected === "string") {
        assert.strictEqual(text, expected, label)
      } else {
        assert.strictEqual(fenced !== null, c.fenced === true, `${label}: fenced or not: ${text}`)
        assert.deepStrictEqual(JSON.parse(fenced === null ? text : fenced[1]), expected, label)
      }
      // The answer quotes the result without the fence.
      assert.strictEqual(textOf(parsed.message), `Result: ${fenced === null ? text : fenced[1]}`, label)
      assert.deepStrictEqual(
        gh.requests.slice(marks.requests).filter(isApi).map(decodeURIComponent),
        value(c.sent),
        label
      )
      if (c.body !== undefined) {
        assert.deepStrictEqual(gh.received.slice(marks.received).at(-1)?.body, value(c.body), label)
      }
      if (c.tokens !== undefined) {
        assert.deepStrictEqual<unknown>(
          gh.state.minted.slice(marks.minted).map((m) => [m.repositories, m.permissions]),
          c.tokens,
          label
        )
      }
      c.after?.()
    }
  })
