/**
 * The seccomp filter in the real sandbox (bubblewrap on this machine's kernel): every process
 * inside runs under it, the calls a workspace never needs fail with EPERM (clone3 with ENOSYS),
 * tools built on them fail, and ordinary work (bash, python3 with threads and fork, git, node where
 * the host has it, a server on a port) still runs.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { Sandbox } from "../../../src/workspace/Sandbox.ts"
import * as SeccompFilter from "../../../src/workspace/SeccompFilter.ts"
import { numberOf } from "../../../src/workspace/SyscallNumbers.ts"
import { sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

const arch = SeccompFilter.archOf(process.arch) ?? "x86_64"
const nr = (name: string) => numberOf(arch, name) ?? -1

/**
 * Each call made raw through libc's syscall(), printed as `name errno` (0: it succeeded). Pointer
 * arguments are zeroed buffers; none of these calls can do harm from here whatever they answer.
 */
const probes: ReadonlyArray<readonly [name: string, args: string]> = [
  ["process_vm_readv", "1, buf(16), 0, buf(16), 0, 0"],
  ["unshare", "0x10000000"], // CLONE_NEWUSER
  ["setns", "0, 0"],
  ["clone", "0x40000011, 0, 0, 0, 0"], // CLONE_NEWNET | SIGCHLD
  ["clone3", "buf(88), 0"], // an invalid size: without the filter it fails, never forks
  ["mount", "b'none', b'/tmp', b'tmpfs', 0, 0"],
  ["umount2", "b'/tmp', 0"],
  ["pivot_root", "b'/', b'/'"],
  ["io_uring_setup", "1, buf(120)"],
  ["keyctl", "0, -3, 0"], // KEYCTL_GET_KEYRING_ID of the session keyring
  ["add_key", "b'user', b'k', b'v', 1, -3"],
  ["bpf", "0, buf(72), 72"],
  ["perf_event_open", "buf(128), 0, -1, -1, 0"],
  ["userfaultfd", "1"], // UFFD_USER_MODE_ONLY
  ["personality", "0x0040000"], // ADDR_NO_RANDOMIZE
  ["kexec_load", "0, 0, 0, 0"],
  ["finit_module", "0, b'', 0"],
  ["settimeofday", "0, 0"],
  ["swapon", "b'/tmp/x', 0"],
  ["acct", "0"],
  ["reboot", "0, 0, 0, 0"],
  ["ptrace", "0, 0, 0, 0"] // PTRACE_TRACEME, last: without the filter it succeeds, and the script is traced
]

const probeScript = `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def buf(n): return ctypes.create_string_buffer(n)
def call(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    print(name, ctypes.get_errno() if r == -1 else 0)
${probes.map(([name, args]) => `call(${JSON.stringify(name)}, ${nr(name)}, ${args})`).join("\n")}
`

describe("sandbox seccomp filter", () => {
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect("every process inside runs under the filter, and the calls a workspace never needs fail", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_seccomp", testLimits)
        const status = yield* sandbox.exec(ws, {
          command: "grep '^Seccomp' /proc/self/status; grep '^Seccomp:' /proc/1/status"
        })
        assert.strictEqual(status.stdout, "Seccomp:\t2\nSeccomp_filters:\t1\nSeccomp:\t2\n")
        const probed = yield* sandbox.exec(ws, { command: "python3 -", stdin: probeScript })
        assert.strictEqual(probed.stderr, "")
        // EPERM (1) everywhere, ENOSYS (38) for clone3 so that the C library falls back to clone.
        assert.deepStrictEqual(
          probed.stdout.trim().split("\n"),
          probes.map(([name]) => `${name} ${name === "clone3" ? 38 : 1}`)
        )
      }))

    it.effect("new namespaces fail from the shell too: unshare -U, -r and -n", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        const ws = yield* sandbox.open("ws_seccomp_tools", testLimits)
        const result = yield* sandbox.exec(ws, {
          command:
            "unshare -U true; echo \"user $?\"; unshare -r true; echo \"root $?\"; unshare -n true; echo \"net $?\""
        })
        assert.strictEqual(result.stdout, "user 1\nroot 1\nnet 1\n")
        assert.strictEqual(
          result.stderr,
          "unshare: unshare failed: Operation not permitted\n".repeat(3)
        )
      }))

    it.effect("ordinary work still runs: pipelines, git, python3 threads, fork and a server on a port, node", () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox
        // Node reserves more address space than the small test limit allows.
        const ws = yield* sandbox.open("ws_seccomp_work", { ...testLimits, memoryBytes: 4 * 1024 ** 3 })
        const python = [
          "import http.server, os, subprocess, threading, urllib.request",
          "t = threading.Thread(target=lambda: print('thread'))",
          "t.start(); t.join()",
          "pid = os.fork()",
          "os._exit(0) if pid == 0 else print('fork', os.waitpid(pid, 0)[1])",
          "print(subprocess.run(['echo', 'subprocess'], capture_output=True, text=True).stdout.strip())",
          "class Quiet(http.server.SimpleHTTPRequestHandler):",
          "    def log_message(self, *args): pass",
          "server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Quiet)",
          "threading.Thread(target=server.serve_forever, daemon=True).start()",
          "print('http', urllib.request.urlopen(f'http://127.0.0.1:{server.server_port}/repo/f').read().decode().strip())"
        ].join("\n")
        const result = yield* sandbox.exec(ws, {
          command: [
            "printf 'b\\na\\nc\\n' | sort | head -2 | tr '\\n' ' '; echo",
            "git init -q repo && cd repo && echo hi > f && git add f",
            "git -c user.email=a@b -c user.name=a commit -qm first && git log --format=%s && cd ..",
            "python3 -c \"$PY\"",
            "if [ -x /usr/bin/node ]; then node -e \"require('fs').promises.readFile('repo/f','utf8').then((t) => console.log('node', t.trim()))\"; fi"
          ].join("\n"),
          env: { PY: python }
        })
        assert.strictEqual(result.stderr, "")
        assert.strictEqual(
          result.stdout,
          [
            "a b ",
            "first",
            "thread",
            "fork 0",
            "subprocess",
            "http hi",
            ...(existsSync("/usr/bin/node") ? ["node hi"] : []),
            ""
          ].join("\n")
        )
        assert.strictEqual(result.exitCode, 0)
      }))
  })
})
