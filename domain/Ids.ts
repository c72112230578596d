/** Id prefixes of every resource, as the spec names them. */
export const IdPrefix = {
  agent: "agent_",
  thread: "thread_",
  run: "run_",
  worker: "wkr_",
  resultHandler: "rh_",
  interaction: "tar_",
  toolCall: "tc_",
  /** Stream part ids of a step's answer text and reasoning. */
  textPart: "txt_",
  reasoningPart: "rs_",
  request: "req_",
  organization: "org_",
  apiKey: "key_",
  secret: "sec_",
  secretContext: "sctx_",
  toolServer: "ts_",
  httpConnection: "hc_",
  hook: "hook_",
  followup: "fu_",
  incident: "inc_",
  /** A process of the deployment (a run's executor). */
  node: "node_"
} as const

export type IdKind = keyof typeof IdPrefix
