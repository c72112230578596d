/**
 * Runs the service as a real child process (`node src/main.ts`), waiting for
 * its "Listening on" line: the process-level contract (`npm start`). Also
 * what such a process is given and answers: a data directory of its own, and
 * raw replies to decode.
 */
import { Effect, Schema, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

export interface ServiceProcess {
  readonly url: string
  /** Everything the process printed so far. */
  readonly output: () => string
  /** What it printed on stdout alone. */
  readonly stdout: () => string
  readonly child: ChildProcess
}

export const waitForExit = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

/** Stops the process with a signal and waits for it to exit. */
export const stop = (p: Pick<Launched, "child">, signal: NodeJS.Signals = "SIGTERM") =>
  Effect.suspend(() => {
    p.child.kill(signal)
    return waitForExit(p.child)
  })

/** Starts `node <script> args` with the given environment; interrupted or closed scopes kill it. */
export const run = (script: string, args: ReadonlyArray<string>, env: Record<string, string>, stdin?: string) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: root, env: { ...process.env, ...env } })
    if (stdin !== undefined) child.stdin.end(stdin)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.once("exit", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

/** A process started but maybe not yet listening. */
export interface Launched {
  /** stdout and stderr as they arrived. */
  readonly output: () => string
  /** stdout alone. */
  readonly stdout: () => string
  readonly child: ChildProcess
}

/** Starts `node <script> args` without waiting for it; closed scopes kill it. */
export const launchScript = (
  script: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>
): Effect.Effect<Launched, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [script, ...args], {
        cwd: root,
        // Previews on any free port (by default they take PORT + 1, which a parallel test may hold).
        env: { ...process.env, HOST: "127.0.0.1", SVC_PREVIEW_PORT: "0", ...env }
      })
      let out = ""
      let stdout = ""
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString()
        stdout += d.toString()
      })
      child.stderr.on("data", (d: Buffer) => (out += d.toString()))
      return { output: () => out, stdout: () => stdout, child }
    }),
    (p) => (p.child.exitCode === null && p.child.signalCode === null ? stop(p, "SIGKILL") : Effect.void)
  )

/** Starts `node src/main.ts` without waiting for it to listen; closed scopes kill it. */
export const launch = (env: Record<string, string>): Effect.Effect<Launched, never, Scope.Scope> =>
  launchScript("src/main.ts", [], env)

/**
 * The first `match` of the process's output (checked as output arrives); fails with
 * `exited(code)` if the process exits first.
 */
const watchOutput = <A>(
  p: Pick<Launched, "output" | "child">,
  match: (output: string) => A | undefined,
  exited: (code: number | null) => string
) =>
  Effect.callback<A, Error>((resume) => {
    const check = () => {
      const found = match(p.output())
      if (found === undefined) return
      cleanup()
      resume(Effect.succeed(found))
    }
    const onExit = (code: number | null) => {
      cleanup()
      resume(Effect.fail(new Error(`${exited(code)}:\n${p.output()}`)))
    }
    const cleanup = () => {
      p.child.stdout?.off("data", check)
      p.child.stderr?.off("data", check)
      p.child.off("exit", onExit)
    }
    // Registered after `launch`'s own listener, so `output()` already holds the new data.
    p.child.stdout?.on("data", check)
    p.child.stderr?.on("data", check)
    p.child.once("exit", onExit)
    check()
    if (p.child.exitCode !== null || p.child.signalCode !== null) onExit(p.child.exitCode)
    return Effect.sync(cleanup)
  })

/** The launched process once it printed its "Listening on" line; fails if it exits first. */
export const listening = (p: Launched): Effect.Effect<ServiceProcess, Error> =>
  watchOutput(
    p,
    (output) => {
      // The URL ends at white space, or at the quote closing it in a JSON log line.
      const url = /Listening on (http:\/\/[^\s"]+)/.exec(output)?.[1]
      return url === undefined ? undefined : { url, output: p.output, stdout: p.stdout, child: p.child }
    },
    (code) => `service exited with ${code} before listening`
  )

export const start = (env: Record<string, string>): Effect.Effect<ServiceProcess, Error, Scope.Scope> =>
  Effect.flatMap(launch(env), listening)

/**
 * Waits until the process's output satisfies `done` (checked as output
 * arrives); fails if the process exits first or `timeoutMs` passes.
 */
export const waitForOutput = (
  p: Pick<Launched, "output" | "child">,
  done: (output: string) => boolean,
  timeoutMs: number
) =>
  watchOutput(p, (output) => (done(output) ? true : undefined), () => "the process exited while waiting on its output")
    .pipe(
      Effect.asVoid,
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () => Effect.fail(new Error(`no expected output after ${timeoutMs} ms:\n${p.output()}`))
      })
    )

export const request = (url: string, method: string, path: string, key: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      body: body === undefined ? null : JSON.stringify(body)
    })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

/** A reply body decoded with `schema`; throws (failing the test) when it does not match. */
export const decodeJson = <A>(schema: Schema.Decoder<A>, text: string): A =>
  Schema.decodeUnknownSync(Schema.fromJsonString(schema))(text)

/** A fresh directory `<tmp>/<prefix>XXXXXX` for an embedded process's data, removed with its scope. */
export const tempDataDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), prefix))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
