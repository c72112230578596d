/**
 * Start-up failures a person can fix, each as one line on stderr instead of a
 * stack trace (src/main.ts): a setting that does not parse, a port already
 * taken, a database that cannot be reached or opened. Also the port check run
 * before anything is created, so that a taken port stops the start before the
 * data directory, the database or a development key exist.
 */
import { Cause, Config, Data, Effect } from "effect"
import { createServer } from "node:net"

/** A port of this service another process holds. */
export class PortInUse extends Data.TaggedError("PortInUse")<{ readonly message: string }> {}

const portMessage = (setting: string, host: string, port: number, code: string) =>
  code === "EADDRINUSE"
    ? `${setting}=${port}: ${host}:${port} is already in use (another agent-service?). Stop that process or set ${setting} to a free port.`
    : code === "EACCES"
    ? `${setting}=${port}: not allowed to listen on ${host}:${port} (ports below 1024 need privileges). Set ${setting} to 1024 or above.`
    : `${setting}=${port}: cannot listen on ${host}:${port} (${code}). Check HOST and ${setting}.`

/**
 * Fails with PortInUse when `host:port` cannot be bound now (port 0, any free
 * port, always can). The probe's socket is closed at once; the real listener
 * binds at the end of the start.
 */
export const checkPort = (setting: string, host: string, port: number): Effect.Effect<void, PortInUse> =>
  port === 0 ? Effect.void : Effect.callback<void, PortInUse>((resume) => {
    const probe = createServer()
    probe.once(
      "error",
      (error: NodeJS.ErrnoException) =>
        resume(Effect.fail(new PortInUse({ message: portMessage(setting, host, port, error.code ?? error.message) })))
    )
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resume(Effect.void)))
  })

/** The errors a failure is made of: the error, its `cause`, that one's, and so on. */
const chain = (error: unknown): ReadonlyArray<unknown> => {
  const out: Array<unknown> = []
  let current = error
  while (current !== undefined && current !== null && out.length < 10 && !out.includes(current)) {
    out.push(current)
    current = typeof current === "object" && "cause" in current ? current.cause : undefined
  }
  return out
}

const field = (error: unknown, name: string): string | undefined => {
  if (typeof error !== "object" || error === null || !(name in error)) return undefined
  const value: unknown = Reflect.get(error, name)
  return typeof value === "string" ? value : undefined
}

/** PostgreSQL's and the socket's reasons a connection fails, in words. */
const databaseReasons: Record<string, string> = {
  ECONNREFUSED: "connection refused (is PostgreSQL running there?)",
  ENOTFOUND: "unknown host",
  ETIMEDOUT: "no answer",
  EHOSTUNREACH: "host unreachable",
  "28P01": "the password was refused",
  "28000": "the user is not allowed to connect",
  "3D000": "the database does not exist"
}

/** `PORT: Expected ...` from a setting that does not parse (`at ["PORT"]` in Effect's message). */
export const settingLine = (error: Config.ConfigError): string => {
  const text = error.cause.message
  const name = /at \["([^"]+)"\]/.exec(text)?.[1]
  const first = text.split("\n")[0].trim()
  return name === undefined ? first : `${name}: ${first}`
}

/** What a start-up failure is read against: the database's URL and the ports with their settings. */
export interface StartupContext {
  readonly databaseUrl: string | undefined
  readonly ports: ReadonlyArray<readonly [setting: string, port: number]>
}

const errorsOf = (cause: Cause.Cause<unknown>): ReadonlyArray<unknown> =>
  cause.reasons.flatMap((r) => (Cause.isFailReason(r) ? [r.error] : Cause.isDieReason(r) ? [r.defect] : []))

/** One line for a start-up failure a person can fix; undefined for any other (reported as it is). */
export const explain = (cause: Cause.Cause<unknown>, context: StartupContext): string | undefined => {
  for (const error of errorsOf(cause)) {
    if (error instanceof Config.ConfigError) return settingLine(error)
    if (error instanceof PortInUse) return error.message
    const errors = chain(error)
    const listen = errors.find((e) => field(e, "syscall") === "listen")
    if (listen !== undefined) {
      const port = Number(Reflect.get(Object(listen), "port"))
      const setting = context.ports.find(([, p]) => p === port)?.[0] ?? "PORT"
      return portMessage(setting, field(listen, "address") ?? "HOST", port, field(listen, "code") ?? "unknown")
    }
    if (errors.some((e) => field(e, "_tag") === "SqlError" || field(e, "_tag") === "ConnectionError")) {
      const code = errors.map((e) => field(e, "code")).find((c) => c !== undefined && c in databaseReasons)
      const url = context.databaseUrl
      const where = url === undefined || !URL.canParse(url)
        ? "the database"
        : `the database at ${new URL(url).host} (DATABASE_URL)`
      const reason = code === undefined
        ? errors.map((e) => (e instanceof Error ? e.message : "")).filter((m) => m !== "").at(-1) ?? "failed"
        : databaseReasons[code]
      return `cannot connect to ${where}: ${reason}.`
    }
    const embedded = errors.find((e) => e instanceof Error && e.message.startsWith("cannot open the embedded database"))
    if (embedded instanceof Error) return embedded.message.split("\n")[0]
  }
  return undefined
}
