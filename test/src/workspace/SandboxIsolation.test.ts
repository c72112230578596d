/**
 * The sandbox on the real machine (bubblewrap, real processes): a command
 * sees and changes its workspace and nothing else. It runs as an
 * unprivileged host uid with no capabilities even though the tests run as
 * root, cannot read root-only files, the service's data directory or another
 * workspace, cannot write outside /workspace, cannot signal host processes,
 * has no network at all (not even the host's loopback), and finds no host
 * path in pid 1's command line or in mountinfo but its own workspace's.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Sandbox } from "../../../src/workspace/Sandbox.ts"
import * as SandboxLive from "../../../src/workspace/SandboxLive.ts"
import { sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

/** The state letter of a host process (`Z` once killed and not yet reaped), or undefined when gone. */
const processState = (pid: number) =>
  existsSync(`/proc/${pid}/status`) ? /State:\s+(\S)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] : undefined

describe("sandbox isolation", () => {
  // Live services: the commands are real processes with real wall time.
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect("a command writes a file and the next command reads it; inside it is uid 1000 without capabilities, on the host a non-root uid", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_identity", testLimits)
        const write = yield* sandbox.exec(ws, {
          command: "mkdir -p notes && echo 'hello from the sandbox' > notes/a.txt"
        })
        assert.deepStrictEqual(write, { exitCode: 0, stdout: "", stderr: "", truncated: false })
        const read = yield* sandbox.exec(ws, {
          command: "cat a.txt; id -u; pwd; grep CapEff /proc/self/status",
          cwd: "notes"
        })
        assert.strictEqual(read.stdout, "hello from the sandbox\n1000\n/workspace/notes\nCapEff:\t0000000000000000\n")
        const owner = statSync(join(ws.dir, "notes", "a.txt")).uid
        assert.strictEqual(owner, ws.uid)
        assert.notStrictEqual(owner, 0)
      }))

    it.effect("root-only files stay unreadable: /etc/shadow is absent, and a root 0600 file inside the workspace cannot be read", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_rootonly", testLimits)
        assert.isTrue(existsSync("/etc/shadow"))
        writeFileSync(join(ws.dir, "root-only.txt"), "root secret\n", { mode: 0o600 })
        const result = yield* sandbox.exec(ws, { command: "cat /etc/shadow; cat root-only.txt; ls root-only.txt" })
        assert.strictEqual(result.stdout, "root-only.txt\n")
        assert.match(result.stderr, /\/etc\/shadow: No such file or directory/)
        assert.match(result.stderr, /root-only.txt: Permission denied/)
      }))

    it.effect("the service's data directory, its working tree and another workspace are not there", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const dataDir = mkdtempSync(join(tmpdir(), "svc-data-"))
        chmodSync(dataDir, 0o755)
        writeFileSync(join(dataDir, "master.key"), "k".repeat(64), { mode: 0o644 })
        const other = yield* sandbox.open("ws_other", testLimits)
        yield* sandbox.exec(other, { command: "echo other > marker.txt" })
        const ws = yield* sandbox.open("ws_mine", testLimits)
        const result = yield* sandbox.exec(ws, {
          command:
            `cat ${dataDir}/master.key; cat ${process.cwd()}/package.json; cat ${other.dir}/marker.txt; ls /workspace/..`
        })
        rmSync(dataDir, { recursive: true, force: true })
        const root = result.stdout.trim().split("\n")
        assert.includeMembers(root, ["dev", "etc", "proc", "tmp", "usr", "workspace"])
        for (const hostOnly of ["root", "home", "work", "var", "opt"]) assert.notInclude(root, hostOnly)
        assert.strictEqual(result.stderr.match(/No such file or directory/g)?.length, 3)
      }))

    it.effect("nothing outside /workspace is writable, and the environment holds only the sandbox's and the caller's variables", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_write", testLimits)
        const result = yield* sandbox.exec(ws, {
          command:
            "for f in /escape /usr/escape /etc/escape /dev/escape; do touch $f 2>/dev/null && echo wrote $f; done; env | cut -d= -f1 | sort",
          env: { GREETING: "hi" }
        })
        for (const f of ["/escape", "/usr/escape", "/etc/escape", "/dev/escape"]) assert.isFalse(existsSync(f))
        assert.deepStrictEqual(result.stdout.trim().split("\n"), [
          "GREETING",
          "HOME",
          "LANG",
          "OLDPWD",
          "PATH",
          "PWD",
          "SHLVL",
          "USER",
          "_"
        ])
      }))

    it.effect("a caller's variable never overrides the sandbox's own nor reaches the programs that start it under a reserved name", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_env", testLimits)
        const result = yield* sandbox.exec(ws, {
          command: "echo \"$PATH|$HOME|${LD_PRELOAD:-none}|${BASH_ENV:-none}|$TOKEN\"",
          env: {
            PATH: "/workspace/bin",
            HOME: "/tmp",
            LD_PRELOAD: "/workspace/evil.so",
            BASH_ENV: "/workspace/rc",
            TOKEN: "t"
          }
        })
        assert.strictEqual(result.exitCode, 0, result.stderr)
        const [path = "", home, preload, bashEnv, token] = result.stdout.trim().split("|")
        assert.isTrue(path.startsWith("/usr/local/bin:/usr/bin:/bin"), path)
        assert.notInclude(path, "/workspace")
        assert.deepStrictEqual([home, preload, bashEnv, token], ["/workspace", "none", "none", "t"])
      }))

    it.effect("a host process of the very same uid cannot be seen or killed from inside", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_kill", testLimits)
        const victim = spawn("sleep", ["30"], { uid: ws.uid, gid: ws.uid, stdio: "ignore" })
        const pid = victim.pid ?? 0
        const result = yield* sandbox.exec(ws, { command: `kill -9 ${pid}; ps -e -o pid= | wc -l` })
        assert.match(result.stderr, /No such process/)
        assert.isTrue(Number(result.stdout.trim()) <= 4) // the sandbox's own: init, bash, ps, wc
        assert.strictEqual(processState(pid), "S")
        victim.kill("SIGKILL")
      }))

    it.effect("no network: the host's loopback server is unreachable and only `lo` exists", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_net", testLimits)
        let connections = 0
        const server = createServer((socket) => {
          connections++
          socket.end("hello\n")
        })
        const port = yield* Effect.promise(() =>
          new Promise<number>((resolve) =>
            server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port))
          )
        )
        const result = yield* sandbox.exec(ws, {
          command:
            `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached loopback); (exec 3<>/dev/tcp/1.1.1.1/53 && echo reached internet); tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`
        })
        yield* Effect.promise(() => new Promise((resolve) => server.close(resolve)))
        assert.strictEqual(result.stdout, "lo\n")
        assert.match(result.stderr, /Connection refused/)
        assert.match(result.stderr, /Network is unreachable/)
        assert.strictEqual(connections, 0)
      }))

    it.effect("no host path inside: pid 1's command line names none, mountinfo only the workspace's own bind, and the uid is the sandbox's", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_hostview", testLimits)
        const root = dirname(dirname(ws.dir))
        const result = yield* sandbox.exec(ws, {
          command: "tr '\\0' ' ' </proc/1/cmdline; echo; cat /proc/self/mountinfo; id -u; cat /etc/passwd"
        })
        const [cmdline = "", ...lines] = result.stdout.split("\n")
        assert.isTrue(
          cmdline.startsWith(
            "bwrap --args 4 -- setpriv --reuid=1000 --regid=1000 --keep-groups --inh-caps=-all --ambient-caps=-all " +
              "--bounding-set=-all -- bash --noprofile --norc -c "
          ),
          cmdline
        )
        for (const host of [root, process.cwd(), tmpdir()]) assert.notInclude(cmdline, host)
        const mounts = lines.filter((line) => line.includes(" - "))
        const mountPointOf = (line: string) => line.split(" ")[4]
        assert.deepStrictEqual(mounts.filter((line) => line.includes(process.cwd())), [])
        // The kernel prints a bind mount's path within its filesystem (see docs/operations/sandbox.md).
        assert.deepStrictEqual(mounts.filter((line) => line.includes(root)).map(mountPointOf), ["/workspace"])
        assert.notInclude(mounts.map(mountPointOf), "/etc/passwd")
        assert.include(lines, "1000")
        assert.notInclude(lines, String(ws.uid))
        assert.include(lines, "sandbox:x:1000:1000:sandbox:/workspace:/bin/bash")
      }))

    it.effect("the host uid shows nowhere inside: not in mountinfo (no tmpfs owner), identity, map, process or environment", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_hostuid", testLimits)
        const result = yield* sandbox.exec(ws, {
          command: "cat /proc/self/mountinfo; echo ---; id; cat /proc/self/uid_map /proc/self/gid_map; " +
            "grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Bnd|Amb)):' /proc/self/status; tr '\\0' '\\n' </proc/1/environ; env; " +
            "tr '\\0' ' ' </proc/1/cmdline; echo; stat -c '%u:%g' / /tmp /dev/shm /workspace"
        })
        const [mountinfo = "", rest = ""] = result.stdout.split("\n---\n")
        const named = new RegExp(`(?<![0-9])${ws.uid}(?![0-9])`)
        const tmpfs = mountinfo.split("\n").filter((line) => line.includes(" - tmpfs "))
        // bwrap makes its mounts as the host's root, whose ownership the kernel does not print (docs/operations/sandbox.md).
        assert.deepStrictEqual(tmpfs.map((line) => line.split(" ")[4]), ["/", "/dev", "/dev/shm", "/tmp"])
        for (const line of tmpfs) assert.notMatch(line, /[ ,](uid|gid)=/)
        assert.notMatch(mountinfo, named)
        assert.notMatch(rest, named)
        assert.include(rest, "uid=1000(sandbox) gid=1000(sandbox) groups=1000(sandbox)")
        assert.include(rest, "Uid:\t1000\t1000\t1000\t1000")
        assert.match(rest, /^Groups:\s*$/m)
        for (const set of ["Inh", "Prm", "Eff", "Bnd", "Amb"]) assert.include(rest, `Cap${set}:\t0000000000000000\n`)
        assert.match(rest, /^ +1000 +0 +1\n +1000 +0 +1\n/m)
        // Inside, the sandbox's root and tmpfs mounts belong to nobody (the host's root, unmapped), the workspace to its user.
        assert.isTrue(rest.endsWith("\n65534:65534\n65534:65534\n65534:65534\n1000:1000\n"), rest)
      }))

    it.effect("the sandbox user writes /tmp and /dev/shm (mode 1777, owned by nobody) and nothing else of the sandbox's root", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_userns", testLimits)
        const result = yield* sandbox.exec(ws, {
          command: "stat -c '%a' /tmp /dev/shm /etc; " +
            "touch /tmp/a /dev/shm/b && echo wrote; touch /etc/c 2>/dev/null || echo refused"
        })
        assert.strictEqual(result.stdout, "1777\n1777\n755\nwrote\nrefused\n")
      }))

    it.effect("workspaces get distinct uids, recorded as their directory's owner and kept on reopen", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const a = yield* sandbox.open("ws_uid_a", testLimits)
        const b = yield* sandbox.open("ws_uid_b", testLimits)
        assert.notStrictEqual(a.uid, b.uid)
        assert.strictEqual((yield* sandbox.open("ws_uid_a", testLimits)).uid, a.uid)
        assert.strictEqual(statSync(a.dir).mode & 0o777, 0o700)
        yield* sandbox.remove("ws_uid_b")
        assert.isFalse(existsSync(b.dir))
      }))

    it.effect("a workspace directory owned by root (made by hand) is refused rather than run as root", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const some = yield* sandbox.open("ws_some", testLimits)
        mkdirSync(join(dirname(some.dir), "ws_by_hand"))
        const error = yield* Effect.flip(sandbox.open("ws_by_hand", testLimits))
        assert.strictEqual(
          error.message,
          "the directory of workspace ws_by_hand is owned by uid 0, outside the workspace uid range"
        )
      }))
  })

  it.live("a root the workspaces' uids cannot traverse: open fails with workspace_unavailable, the service goes on", () =>
    Effect.gen(function*() {
      const parent = mkdtempSync(join(tmpdir(), "svc-closed-")) // mode 0700
      mkdirSync(join(parent, "root"))
      const error = yield* Effect.flip(
        Effect.flatMap(Sandbox, (sandbox) => sandbox.open("ws_closed", testLimits)).pipe(
          Effect.provide(SandboxLive.layer({ root: join(parent, "root") }))
        )
      )
      rmSync(parent, { recursive: true, force: true })
      assert.strictEqual(error._tag, "WorkspaceUnavailable")
      assert.strictEqual(error.code, "workspace_unavailable")
      assert.match(error.message, /is not traversable by other users/)
    }))
})
