/**
 * A real DNS server (UDP, 127.0.0.1, ephemeral port) answering A and AAAA
 * queries from a table the test controls (a name holds one address or
 * several, IPv4 answered to A, IPv6 to AAAA); every other name is NXDOMAIN,
 * and a known name without an address of the asked family gets an empty
 * answer. Answers carry TTL 0, so a resolver never serves a changed record
 * from its cache. Records every query, so a test can tell when the service
 * is resolving a name.
 */
import dns2 from "dns2"
import { Context, Effect, Layer } from "effect"
import { isIP } from "node:net"

const { Packet } = dns2

export interface Query {
  readonly name: string
  readonly type: number
}

export class DnsServer extends Context.Service<DnsServer, {
  /** `127.0.0.1:<port>`, as ServiceConfig.dnsServers takes it. */
  readonly address: string
  /** Sets (or with undefined removes) the address of `name`: its only record. */
  readonly setA: (name: string, address: string | undefined) => Effect.Effect<void>
  /** A queries received so far for `name`. */
  readonly queriesFor: (name: string) => Effect.Effect<number>
  /** Completes once at least `count` A queries for `name` have arrived in total. */
  readonly awaitQueries: (name: string, count: number) => Effect.Effect<void>
}>()("test/DnsServer") {
  static readonly layer = (records: Readonly<Record<string, string | ReadonlyArray<string>>>) =>
    Layer.effect(DnsServer)(
      Effect.gen(function*() {
        const table = new Map<string, ReadonlyArray<string>>(
          Object.entries(records).map(([k, v]) => [k.toLowerCase(), typeof v === "string" ? [v] : v])
        )
        const queries: Array<Query> = []
        const waiters: Array<{ readonly name: string; readonly count: number; readonly resolve: () => void }> = []
        const countA = (name: string) => queries.filter((q) => q.name === name && q.type === Packet.TYPE.A).length
        const notify = () => {
          for (let i = waiters.length - 1; i >= 0; i--) {
            const waiter = waiters[i]
            if (countA(waiter.name) >= waiter.count) {
              waiters.splice(i, 1)
              waiter.resolve()
            }
          }
        }

        const server = dns2.createServer({
          udp: true,
          handle: (request, send) => {
            const [question] = request.questions
            if (question === undefined) {
              void send(Packet.createErrorResponseFromRequest(request, Packet.RCODE.FORMERR))
              return
            }
            const name = question.name.toLowerCase()
            const addresses = table.get(name)
            if (addresses === undefined) {
              void send(Packet.createErrorResponseFromRequest(request, Packet.RCODE.NXDOMAIN))
            } else {
              const response = Packet.createResponseFromRequest(request)
              const family = question.type === Packet.TYPE.A ? 4 : question.type === Packet.TYPE.AAAA ? 6 : 0
              for (const address of addresses.filter((a) => isIP(a) === family)) {
                response.answers.push(
                  Packet.createResourceFromQuestion(question, {
                    type: question.type,
                    class: Packet.CLASS.IN,
                    ttl: 0,
                    address
                  })
                )
              }
              void send(response)
            }
            queries.push({ name, type: question.type })
            notify()
          }
        })

        const addresses = yield* Effect.acquireRelease(
          Effect.promise(() => server.listen({ udp: { port: 0, address: "127.0.0.1" } })),
          () => Effect.promise(() => server.close())
        )
        const port = addresses.udp?.port
        if (port === undefined) return yield* Effect.die(new Error("the DNS server did not bind a UDP port"))

        return DnsServer.of({
          address: `127.0.0.1:${port}`,
          setA: (name, address) =>
            Effect.sync(() => {
              if (address === undefined) table.delete(name.toLowerCase())
              else table.set(name.toLowerCase(), [address])
            }),
          queriesFor: (name) => Effect.sync(() => countA(name.toLowerCase())),
          awaitQueries: (name, count) =>
            Effect.callback<void>((resume) => {
              const key = name.toLowerCase()
              if (countA(key) >= count) return resume(Effect.void)
              const waiter = { name: key, count, resolve: () => resume(Effect.void) }
              waiters.push(waiter)
              return Effect.sync(() => {
                const index = waiters.indexOf(waiter)
                if (index !== -1) waiters.splice(index, 1)
              })
            })
        })
      })
    )
}
