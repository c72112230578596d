/**
 * The validation worker's thread (started by SchemaWorker.ts): answers each
 * request with SchemaValidator's check or validation. Whatever a schema makes
 * Ajv do runs here, never on the thread that serves requests.
 */
import { parentPort } from "node:worker_threads"
import * as SchemaValidator from "./SchemaValidator.ts"
import type { WorkerAnswer, WorkerRequest } from "./SchemaWorker.ts"

const answer = (request: WorkerRequest): WorkerAnswer => {
  try {
    if (request.kind === "check") {
      const problem = SchemaValidator.check(request.schema)
      return problem === undefined ? { id: request.id, _tag: "Valid" } : { id: request.id, _tag: "Refused", problem }
    }
    return { id: request.id, ...SchemaValidator.validate(request.schema, request.value) }
  } catch (cause) {
    // A validator that throws (a stack exhausted in spite of the depth bounds): said, not fatal.
    return {
      id: request.id,
      _tag: "Refused",
      problem: `could not be used: ${cause instanceof Error ? cause.message : String(cause)}`
    }
  }
}

parentPort?.on("message", (request: WorkerRequest) => parentPort?.postMessage(answer(request)))
