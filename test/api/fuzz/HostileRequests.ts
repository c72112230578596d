/**
 * What the route fuzzer sends as a hostile tenant would, beside its malformed
 * requests: requests that are well-formed enough to reach the work a tenant
 * can make the service do (SchemaBombs.ts has the payloads):
 *
 * - schema bombs: an HTTP connection's inline OpenAPI document whose `$ref`s
 *   fan out (up to 10^9 expanded), a run's `outputSchema` nested up to 10,000
 *   levels or fanning out through `$defs`, patterns RE2 cannot run, an
 *   `anyOf` that walks a value exponentially;
 * - backtracking patterns on what the service validates: a run's answer
 *   against `outputSchema`, a tool's input against an OpenAPI operation's
 *   parameter (the scripted model calls it with the input the case chose);
 * - JSON bodies nested 10,000 levels, in fields and as the body itself, and
 *   answers nested as deep;
 * - bodies at, just past and far past the body limit, and a large upload.
 *
 * A case names its request; `{thread}` in it is a thread made for the case
 * (so a run starts, never `thread_busy`), of the fixture's agent (with the
 * pattern-checking HTTP connection). A run is sent as a message whose answer
 * streams to the run's end, so the case lasts as long as the work it caused.
 */
import { fc } from "@fast-check/vitest"
import {
  backtracking,
  deepJsonText,
  deepSchemaText,
  exponentialSchema,
  exponentialValue,
  fanOutDocument,
  fanOutJsonSchema,
  nonLinearPatterns
} from "../../support/SchemaBombs.ts"

export interface HostileRequest {
  readonly label: string
  readonly method: string
  /** May hold `{thread}`. */
  readonly path: string
  /** Raw text (some cannot go through JSON.stringify); may hold `{thread}`. */
  readonly body: string
  readonly contentType: string
  /**
   * Ends only at a time limit of the service's clock (the validation worker's 2 s), a TestClock in
   * the tests: the runner moves it on while the case is in flight.
   */
  readonly timed?: true
}

/** The HTTP connection the fixture agent uses: its one operation takes `q` matching a backtracking pattern. */
export const patternConnection = {
  name: "fuzzpat",
  tool: "api__fuzzpat__search",
  /** Registration never connects; a call that passes validation is refused by the closed port. */
  baseUrl: "http://127.0.0.1:9",
  spec: JSON.stringify({
    openapi: "3.0.3",
    info: { title: "Patterns", version: "1.0.0" },
    paths: {
      "/search": {
        get: {
          operationId: "search",
          parameters: [{
            name: "q",
            in: "query",
            required: true,
            schema: { type: "string", pattern: backtracking.pattern }
          }],
          responses: { "200": { description: "OK" } }
        }
      }
    }
  })
} as const

const json = (method: string, path: string, label: string) => (body: string): HostileRequest => ({
  label,
  method,
  path,
  body,
  contentType: "application/json"
})

/** A run on a fresh thread whose answer (or tool call) is `script`, with `outputSchema` given as text. */
const run = (label: string, script: string, outputSchemaText?: string) =>
  json("POST", "/v1/threads/{thread}/messages", label)(
    `{"input":${JSON.stringify(script)}${outputSchemaText === undefined ? "" : `,"outputSchema":${outputSchemaText}`}}`
  )

const patternSchema = JSON.stringify({ type: "string", pattern: backtracking.pattern })

// ---- the kinds of case, each with its worst parameters first ------------------

let connectionNames = 0
const openApiFanOut = (depth: number, fanOut: number) =>
  json("POST", "/v1/http-connections", `OpenAPI $ref fan-out ${fanOut}^${depth}`)(
    JSON.stringify({ name: `fanout-${depth}-${fanOut}-${connectionNames++}`, spec: fanOutDocument(depth, fanOut) })
  )
const deepOutputSchema = (depth: number) =>
  run(`outputSchema nested ${depth} levels`, "/output \"x\"", deepSchemaText(depth))
const fanOutOutputSchema = (depth: number) =>
  run(`outputSchema $defs fan-out 10^${depth}`, "/output {}", JSON.stringify(fanOutJsonSchema(depth)))
const nonLinearPattern = (pattern: string) =>
  run(`outputSchema pattern ${pattern}`, "/output \"a\"", JSON.stringify({ type: "string", pattern }))
const exponentialAnswer = (depth: number): HostileRequest => ({
  ...run(
    `exponential anyOf over an answer ${depth} levels deep`,
    `/output ${JSON.stringify(exponentialValue(depth))}`,
    JSON.stringify(exponentialSchema)
  ),
  timed: true
})
const backtrackingAnswer = (length: number) =>
  run(
    `an answer of ${length} a's and a '!' against ${backtracking.pattern}`,
    `/output ${JSON.stringify(backtracking.input(length))}`,
    patternSchema
  )
const backtrackingToolInput = (length: number) =>
  run(
    `a tool input of ${length} a's and a '!' against ${backtracking.pattern}`,
    `/tool ${patternConnection.tool} ${JSON.stringify({ q: backtracking.input(length) })}`
  )
const deepMetadata = (depth: number) =>
  json("POST", "/v1/agents", `agent metadata nested ${depth} levels`)(`{"metadata":${deepJsonText(depth)}}`)
const deepInput = (depth: number) =>
  json("POST", "/v1/threads/{thread}/messages", `run input nested ${depth} levels`)(`{"input":${deepJsonText(depth)}}`)
const deepAnswer = (depth: number) =>
  run(`an answer nested ${depth} levels`, `/output ${deepJsonText(depth)}`, "{\"type\":\"object\"}")
const deepBody = (depth: number) =>
  json("POST", "/v1/threads", `a body nested ${depth} levels`)("[".repeat(depth) + "]".repeat(depth))
const largeAgent = (size: number) => {
  const prefix = "{\"context\":\""
  return json("POST", "/v1/agents", `an agent body of ${size} bytes`)(
    `${prefix}${"x".repeat(Math.max(0, size - prefix.length - 2))}"}`
  )
}
const largeUpload = (size: number): HostileRequest => ({
  label: `an upload of ${size} bytes`,
  method: "POST",
  path: "/v1/files",
  body: "--fuzz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n" +
    `Content-Type: application/octet-stream\r\n\r\n${"\u0001".repeat(size)}\r\n--fuzz--\r\n`,
  contentType: "multipart/form-data; boundary=fuzz"
})

const lengths = [35, 28, 5_000] as const
const depths = [10_000, 129] as const

/** Every kind of case, at random parameters; bodies are sized around `maxBodyBytes` (the server's limit). */
export const hostileRequest = (maxBodyBytes: number): fc.Arbitrary<HostileRequest> =>
  fc.oneof(
    fc.tuple(fc.integer({ min: 2, max: 9 }), fc.integer({ min: 2, max: 10 })).map(([d, f]) => openApiFanOut(d, f)),
    fc.constantFrom(10_000, 200, 65, 64).map(deepOutputSchema),
    fc.integer({ min: 2, max: 9 }).map(fanOutOutputSchema),
    fc.constantFrom(...nonLinearPatterns).map(nonLinearPattern),
    fc.integer({ min: 30, max: 40 }).map(exponentialAnswer),
    fc.constantFrom(...lengths).map(backtrackingAnswer),
    fc.constantFrom(...lengths).map(backtrackingToolInput),
    fc.constantFrom(...depths).map(deepMetadata),
    fc.constantFrom(...depths).map(deepInput),
    fc.constantFrom(...depths).map(deepAnswer),
    fc.constantFrom(20_000, 10_000).map(deepBody),
    fc.constantFrom(maxBodyBytes + 1, maxBodyBytes, 8 * 1024 * 1024).map(largeAgent),
    fc.constantFrom(4 * 1024 * 1024, 1024 * 1024).map(largeUpload)
  )

/** One case of each kind at its worst, which every run sends first (the short CI run included). */
export const hostileExamples = (maxBodyBytes: number): ReadonlyArray<HostileRequest> => [
  openApiFanOut(9, 10),
  deepOutputSchema(10_000),
  fanOutOutputSchema(9),
  ...nonLinearPatterns.map(nonLinearPattern),
  exponentialAnswer(40),
  backtrackingAnswer(35),
  backtrackingToolInput(35),
  deepMetadata(10_000),
  deepInput(10_000),
  deepAnswer(10_000),
  deepBody(20_000),
  largeAgent(maxBodyBytes + 1),
  largeAgent(8 * 1024 * 1024),
  largeUpload(4 * 1024 * 1024)
]
