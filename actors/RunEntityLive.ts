/** Behaviour of the run entity: the loop host (LoopHost.ts) for root runs, addressed by run id. */
import { loopHost } from "./LoopHost.ts"
import { RunEntity } from "./RunEntity.ts"

export const RunEntityLive = loopHost(RunEntity)
