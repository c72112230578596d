/**
 * The script a declared service (spec 2.1.3 `services`) runs inside its
 * sandbox: its output appended to `.svc/logs/<name>.log` in the workspace
 * (written by the sandbox itself, never by the service on the host), the
 * command started with `bash -lc` in its cwd and, for a service with a port,
 * once that port listens inside the sandbox (127.0.0.1 or every address), a
 * `socat` bridge that serves it on `<ports>/<port>.sock`, the socket through
 * which commands and previews reach it from other network namespaces. The
 * sandbox ends when the command does.
 */
import { hexPort, mountPoint, portsMount } from "./BwrapCommand.ts"

/** The log file's name: the service's name with every character but `[A-Za-z0-9_-]` replaced by `_`. */
export const logFile = (name: string): string => `.svc/logs/${name.replace(/[^A-Za-z0-9_-]/g, "_")}.log`

const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

export const script = (
  service: { readonly name: string; readonly command: string; readonly port?: number | undefined }
): string => {
  const log = quote(`${mountPoint}/${logFile(service.name)}`)
  const port = service.port
  return [
    `mkdir -p ${mountPoint}/.svc/logs && exec >>${log} 2>&1 </dev/null || exit 1`,
    `echo "--- started $(date -u +%FT%TZ)"`,
    `bash -lc ${quote(service.command)} &`,
    `svc=$!`,
    ...(port === undefined ? [] : [
      `while kill -0 "$svc" 2>/dev/null && ! grep -qsE ': [0-9A-F]+:${
        hexPort(port)
      } [0-9A-F]+:0000 0A ' /proc/net/tcp /proc/net/tcp6; do sleep 0.05; done`,
      `kill -0 "$svc" 2>/dev/null && socat UNIX-LISTEN:${portsMount}/${port}.sock,fork,mode=600 TCP:127.0.0.1:${port} &`
    ]),
    `wait "$svc"`,
    `code=$?`,
    `echo "--- exited with code $code $(date -u +%FT%TZ)"`,
    `exit "$code"`
  ].join("\n")
}
