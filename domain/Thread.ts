/** Threads (spec 2.2): a conversation bound to one agent. */
import { Schema } from "effect"
import { Band } from "./Band.ts"
import { ContextBlock, ContextInput } from "./Context.ts"
import { AgentId, ThreadId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"

const opt = Schema.optionalKey

export const ThreadStatus = Schema.Literals(["idle", "running", "deleting"])
export type ThreadStatus = typeof ThreadStatus.Type

export const WorkspaceStatus = Schema.Literals([
  "uninitialized",
  "starting",
  "active",
  "hibernated",
  "restoring",
  "evicted",
  "failed",
  "unavailable",
  "archived"
])

export const ThreadWorkspace = Schema.Struct({
  status: WorkspaceStatus,
  previews: opt(Schema.Array(Schema.Struct({ port: Schema.Number, url: Schema.String, expiresAt: Schema.String }))),
  updatedAt: opt(Schema.String)
})
export type ThreadWorkspace = typeof ThreadWorkspace.Type

/** An IANA zone name; validity is checked by the service (it needs the zone database). */
export const TimeZoneName = Schema.String.annotate({ description: "IANA time zone, for example Europe/Paris" })

export const ThreadCreate = Schema.Struct({
  agentId: AgentId,
  context: opt(ContextInput),
  band: opt(Band),
  dataHandling: opt(Schema.NullOr(Schema.Literal("strict"))),
  timeZone: opt(Schema.NullOr(TimeZoneName)),
  metadata: opt(Metadata)
}).annotate({ identifier: "ThreadCreate" })
export type ThreadCreate = typeof ThreadCreate.Type

export const ThreadPatch = Schema.Struct({
  context: opt(ContextInput),
  forceRefresh: opt(Schema.Boolean),
  band: opt(Schema.NullOr(Band)),
  dataHandling: opt(Schema.NullOr(Schema.Literal("strict"))),
  timeZone: opt(Schema.NullOr(TimeZoneName)),
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "ThreadPatch" })
export type ThreadPatch = typeof ThreadPatch.Type

export const Thread = Schema.Struct({
  id: ThreadId,
  object: Schema.Literal("thread"),
  agentId: AgentId,
  context: Schema.Array(ContextBlock),
  band: Schema.NullOr(Band),
  dataHandling: Schema.NullOr(Schema.Literal("strict")),
  timeZone: Schema.NullOr(Schema.String),
  status: ThreadStatus,
  workspace: Schema.NullOr(ThreadWorkspace),
  metadata: Metadata,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Thread" })
export type Thread = typeof Thread.Type

export const ThreadCreated = Schema.Struct({ ...Thread.fields, created: Schema.Boolean }).annotate({
  identifier: "ThreadCreated"
})
export type ThreadCreated = typeof ThreadCreated.Type
