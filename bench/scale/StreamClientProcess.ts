/** Starts StreamClient.ts as a child process and sends it commands, one at a time (its replies come in order). */
import { fork } from "node:child_process"
import { children, root } from "../support/Processes.ts"
import { type Command, decodeReply, type Reply } from "./StreamProtocol.ts"

export interface StreamClientProcess {
  readonly pid: number | undefined
  readonly ask: <T extends Reply["type"]>(command: Command, expect: T) => Promise<Extract<Reply, { readonly type: T }>>
  readonly stop: () => void
}

const isReply = <T extends Reply["type"]>(reply: Reply, type: T): reply is Extract<Reply, { readonly type: T }> =>
  reply.type === type

export const startStreamClient = (base: string, key: string): Promise<StreamClientProcess> =>
  new Promise((resolve, reject) => {
    const child = fork("bench/scale/StreamClient.ts", [base, key], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    children.add(child)
    const waiting: Array<(reply: Reply) => void> = []
    child.on("message", (message: unknown) => {
      const reply = decodeReply(message)
      if (reply.type === "ready") {
        resolve({
          pid: child.pid,
          ask: (command, expect) =>
            new Promise((answered, failed) => {
              waiting.push((r) => {
                if (isReply(r, expect)) answered(r)
                else failed(new Error(`the stream client answered ${r.type} to ${command.type}`))
              })
              child.send(command)
            }),
          stop: () => {
            children.delete(child)
            child.kill()
          }
        })
        return
      }
      waiting.shift()?.(reply)
    })
    child.once("exit", (code, signal) => {
      children.delete(child)
      reject(new Error(`the stream client exited (${code ?? signal})`))
    })
  })
