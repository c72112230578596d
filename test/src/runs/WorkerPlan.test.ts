/**
 * What a delegated task's run inherits of its root's plan (src/runs/Delegation.ts):
 * a worker gets its root's tool-bearing capabilities (web, browser, media viewing
 * and generation, code hosting, the workspace); an advisor only answers, so it
 * gets none of them (spec 2.3: an advisor has no tools).
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { RunPlan } from "../../../domain/RunPlan.ts"
import { WorkerPlan } from "../../../domain/Worker.ts"
import { workerPlan } from "../../../src/runs/Delegation.ts"

const root = Schema.decodeUnknownSync(RunPlan)({
  input: "Research the harbour",
  route: "scripted",
  context: ["You are a researcher."],
  skills: [],
  userInteraction: true,
  toolServers: [],
  httpConnections: [],
  approvals: null,
  maxSteps: 10,
  maxDurationMs: null,
  budgetCents: null,
  outputSchema: null,
  streamProgress: false,
  streamReasoning: false,
  subagents: true,
  web: true,
  browser: { tabs: true, files: false },
  mediaView: "auto",
  media: [{ kind: "image", route: "openai:gpt-image-1", unit: "image", centsPerUnit: 4 }],
  codehost: { connectionId: "chc_3h0XkT2qZr9vW1mNc4Lb8Y" }
})

const as = (role: "worker" | "advisor") =>
  workerPlan(
    root,
    { label: "look", prompt: "Look it up", role },
    Schema.decodeUnknownSync(WorkerPlan)({
      rootRunId: "run_3h0XkT2qZr9vW1mNc4Lb8Y",
      workerRef: "wkr_3h0XkT2qZr9vW1mNc4Lb8Y",
      role,
      label: "look",
      deadlineMs: null
    }),
    2
  )

const tooled = (plan: RunPlan) => ({
  web: plan.web,
  browser: plan.browser,
  mediaView: plan.mediaView,
  media: plan.media,
  codehost: plan.codehost,
  userInteraction: plan.userInteraction
})

describe("workerPlan", () => {
  it("a worker has its root's tool-bearing capabilities", () => {
    assert.deepStrictEqual(tooled(as("worker")), tooled(root))
    assert.strictEqual(as("worker").input, "Look it up")
  })

  it("an advisor has none of them", () => {
    assert.deepStrictEqual(tooled(as("advisor")), {
      web: undefined,
      browser: undefined,
      mediaView: undefined,
      media: undefined,
      codehost: undefined,
      userInteraction: false
    })
    const advisor = as("advisor")
    for (const key of ["web", "browser", "mediaView", "media", "codehost", "workspace", "remoteWorkspace"] as const) {
      assert.isFalse(key in advisor, key)
    }
  })
})
