/**
 * Write-only values: a secret's value, a hook's or result handler's signing
 * secret. The service takes them in and never gives them back, in no
 * response and no error message; these assert that of one reply.
 */
import { assert } from "@effect/vitest"
import type * as TestServer from "./TestServer.ts"

/** None of `values` appears anywhere in the reply. */
export const assertNoValue = (reply: TestServer.Reply, ...values: ReadonlyArray<string>) => {
  for (const value of values) {
    assert.isFalse(reply.text.includes(value), `the value leaked into: ${reply.text.slice(0, 500)}`)
  }
}

/** None of `secrets` appears in the reply, nor a `secret` field at all. */
export const assertNoSecret = (reply: TestServer.Reply, ...secrets: ReadonlyArray<string>) => {
  assertNoValue(reply, ...secrets)
  assert.notInclude(reply.text, "\"secret\"", reply.text)
}
