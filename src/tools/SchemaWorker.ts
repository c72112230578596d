/**
 * Checks and validations of tenants' JSON Schemas, off the thread that serves
 * requests: one worker thread of the process (started on first use, unref'd, so
 * it never holds a shutdown) runs them one at a time, each within
 * SchemaLimits.validationTimeoutMs (counted once the thread is up: a new
 * thread's start-up is not a request's time). Patterns already run in linear time
 * (SchemaValidator.ts), but a schema can still make Ajv work hard (compiling a
 * large schema, `anyOf` branches that each walk the whole value): a request past
 * its time ends the worker, its answer says why, and the next request starts a
 * new one. The cheap bounds (SchemaBudget.ts) are checked here first, before
 * anything is sent.
 */
import { Duration, Effect, Semaphore } from "effect"
import { Worker } from "node:worker_threads"
import { deeperThan, SchemaLimits, validatedSchemaProblem } from "./SchemaBudget.ts"
import type { Validation } from "./SchemaValidator.ts"

type Schema = Readonly<Record<string, unknown>>

export type WorkerRequest =
  | { readonly id: number; readonly kind: "check"; readonly schema: Schema }
  | { readonly id: number; readonly kind: "validate"; readonly schema: Schema; readonly value: unknown }

export type WorkerAnswer = { readonly id: number } & Validation

type Request =
  | { readonly kind: "check"; readonly schema: Schema }
  | { readonly kind: "validate"; readonly schema: Schema; readonly value: unknown }

interface Running {
  readonly thread: Worker
  /** Settles when the thread is up (or gone): its start-up is not counted in a request's time. */
  readonly online: Promise<void>
}

let worker: Running | undefined
let waiting: ((answer: WorkerAnswer) => void) | undefined
let nextId = 0
const lane = Semaphore.makeUnsafe(1)

const start = (): Running => {
  const thread = new Worker(new URL("./SchemaWorkerMain.ts", import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 }
  })
  thread.unref()
  const online = new Promise<void>((resolve) => {
    thread.once("online", () => resolve())
    thread.once("exit", () => resolve())
  })
  const started: Running = { thread, online }
  const ended = (problem: string) => {
    if (worker !== started) return
    worker = undefined
    waiting?.({ id: -1, _tag: "Refused", problem })
  }
  thread.on("message", (answer: WorkerAnswer) => {
    if (worker === started) waiting?.(answer)
  })
  thread.on("error", (cause) => ended(`could not be validated: the validation worker failed (${cause.message})`))
  thread.on("exit", () => ended("could not be validated: the validation worker stopped"))
  worker = started
  return started
}

/** Ends the worker (work nobody waits for, or past its time): the next request starts another. */
const stop = Effect.sync(() => {
  const current = worker
  worker = undefined
  waiting = undefined
  void current?.thread.terminate()
})

const ask = (request: Request): Effect.Effect<Validation> =>
  Semaphore.withPermits(lane, 1)(Effect.suspend(() => {
    const current = worker ?? start()
    // A new thread's start-up (slow on a loaded machine) comes before the request's time starts.
    return Effect.andThen(Effect.promise(() => current.online), send(current, request))
  }))

const send = (current: Running, request: Request): Effect.Effect<Validation> =>
  Effect.callback<Validation>((resume) => {
    const id = nextId++
    waiting = (answer) => {
      if (answer.id !== id && answer.id !== -1) return
      waiting = undefined
      const { id: _, ...validation } = answer
      resume(Effect.succeed(validation))
    }
    try {
      current.thread.postMessage({ ...request, id })
    } catch (cause) {
      waiting = undefined
      resume(Effect.succeed({
        _tag: "Refused",
        problem: `could not be validated: ${cause instanceof Error ? cause.message : String(cause)}`
      }))
    }
    // Interrupted (the caller gave up, or the time limit below): the work is stopped with the worker.
    return stop
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(SchemaLimits.validationTimeoutMs),
      orElse: () =>
        Effect.succeed<Validation>({
          _tag: "Refused",
          problem: `took longer than ${SchemaLimits.validationTimeoutMs} ms to validate`
        })
    })
  )

/**
 * Why a schema the service validates with cannot be used, as a predicate of it ("is nested
 * deeper than 64 levels", "is not a valid JSON Schema: ...", "has a pattern the linear-time
 * engine cannot run: ..."), or undefined when it can.
 */
export const check = (schema: Schema): Effect.Effect<string | undefined> => {
  const bound = validatedSchemaProblem(schema)
  if (bound !== undefined) return Effect.succeed(bound)
  return Effect.map(ask({ kind: "check", schema }), (v) => (v._tag === "Refused" ? v.problem : undefined))
}

/** `value` against `schema` (whose bounds are checked again), off this thread and within its time. */
export const validate = (schema: Schema, value: unknown): Effect.Effect<Validation> => {
  const bound = validatedSchemaProblem(schema)
  if (bound !== undefined) return Effect.succeed({ _tag: "Refused", problem: bound })
  if (deeperThan(value, SchemaLimits.maxValueDepth)) {
    return Effect.succeed({
      _tag: "Invalid",
      message: `the value is nested deeper than ${SchemaLimits.maxValueDepth} levels`
    })
  }
  return ask({ kind: "validate", schema, value })
}
