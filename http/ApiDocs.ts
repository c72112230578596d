/**
 * What the reference page (`/docs`) and generated clients say about each
 * operation: a one-line summary, a description in our own words, and for a
 * JSON body an example of it. The Api files attach these to their endpoints;
 * handlers never see them. test/api/OpenApiDocs.test.ts fails when an
 * operation lacks one, and decodes every example with its payload schema.
 */
import type { Schema } from "effect"
import { OpenApi } from "effect/http-api"

/** An operation's summary and description. */
export const doc = (summary: string, description: string) => OpenApi.annotations({ summary, description })

/** `doc`, plus an example request body, written as it goes on the wire (`schema`'s encoded form). */
export const docWithBody = <S extends Schema.Top>(
  summary: string,
  description: string,
  _schema: S,
  example: S["Encoded"]
) => OpenApi.annotations({ summary, description, transform: withJsonExample(example) })

/** Sets `example` on the operation's `application/json` request body. */
const withJsonExample = (example: unknown) => (operation: Record<string, unknown>): Record<string, unknown> => {
  const body = operation["requestBody"]
  if (!isRecord(body) || !isRecord(body["content"])) return operation
  const json = body["content"]["application/json"]
  if (!isRecord(json)) return operation
  return {
    ...operation,
    requestBody: { ...body, content: { ...body["content"], "application/json": { ...json, example } } }
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Well-formed ids for examples (a prefix and 22 base62 characters, as the service mints them). */
export const ExampleIds = {
  agent: "agent_3h0XkT2qZr9vW1mNc4Lb8Y",
  thread: "thread_5pQ2wE8rT1yU4iO7aS0dFg",
  toolServer: "ts_3h0XkT2qZr9vW1mNc4Lb8Y",
  secret: "sec_7Kd2LmQ9xR4tV8bN1cZ6hJ",
  interaction: "tar_2Gh7Jk4Lm9Np3Qr8St1Uv6W",
  interaction2: "tar_9Wx4Yz7Ab2Cd5Ef8Gh1Ij3K"
} as const
