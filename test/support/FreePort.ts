/** A TCP port on 127.0.0.1 that nothing listens on (the OS picks it; it is closed again at once). */
import { createServer } from "node:net"

export const freePortNow = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
