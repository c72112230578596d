/**
 * The command line of one sandboxed command. As root: `setpriv` (no groups,
 * death with the service), `prlimit` sets the resource limits, a small root
 * script makes the user namespace the command will end in (`userNamespace`),
 * `unshare` makes an outer pid namespace whose init is bwrap itself, then
 * `bwrap`, still the host's root, builds the sandbox, joins that namespace and
 * runs `setpriv` to uid 1000 (the workspace's host uid) and `bash -lc
 * <command>`. The outer namespace is there so that nothing outlives the
 * command, not even bwrap's own helper: it would otherwise be left to the
 * host's init to reap. Not as root: `prlimit` and `bwrap` as the service,
 * bwrap making its own user namespaces.
 *
 * Inside: a fresh root (read-only once built), the host's /usr read-only with
 * the merged-usr links (/bin, /lib, ...), a few selected /etc entries (no
 * shadow, no keys) and a passwd and group of the sandbox's own, a private /proc,
 * a minimal /dev, a size-capped tmpfs /tmp and /dev/shm (mode 1777), and the
 * workspace directory bound read-write at /workspace, the only writable tree
 * that outlives the command. Every namespace is new (user, pid, ipc, uts, net,
 * cgroup): no network interface but `lo`, no view of host processes, no nested
 * user namespaces. The command is uid 1000 with no capabilities, on the host the
 * workspace's unprivileged uid, so it can touch only what that uid may. Every
 * process inside runs under the seccomp filter of SeccompFilter (bwrap installs
 * it on its init and on the command, after building the sandbox).
 *
 * What the inside can read of the outside: bwrap's options (every host path)
 * reach it on a descriptor (`--args`), never its command line, so the sandbox's
 * pid 1, bwrap's reaper, shows only `bwrap --args 4 -- setpriv ... bash ...` in
 * /proc/1/cmdline; passwd and group are written into the sandbox's root from
 * descriptors rather than bound from a host file; as root the tmpfs mounts are
 * the host root's, which the kernel prints no owner for. The kernel still prints,
 * in /proc/self/mountinfo, a bind mount's path within its filesystem, and (not
 * as root) the tmpfs owner's host uid (see docs/operations/sandbox.md).
 *
 * Descriptors: bwrap reports on fd 3 (`--json-status-fd`) once the command
 * started, which tells a sandbox that could not be built from a command that
 * failed; it reads its options on fd 4, the seccomp program on fd 5, passwd
 * and group on fds 6 and 7 (`inputs`, in that order); as root, the user
 * namespace to join on fd 10.
 */
import { lstatSync, readlinkSync } from "node:fs"
import { dirname } from "node:path"

/** Where the workspace appears inside the sandbox. */
export const mountPoint = "/workspace"
/** The sandbox user inside (same on every node, so snapshots restore anywhere). */
export const innerUid = 1000

/** Host directories bound read-only, or recreated as links when the host has them as links (merged /usr). */
const systemDirs = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
/** /etc entries programs need to run; nothing secret (no shadow, ssh, ssl private keys). */
const etcEntries = [
  "alternatives",
  "bash.bashrc",
  "ca-certificates",
  "ca-certificates.conf",
  "debian_version",
  "fonts",
  "host.conf",
  "hosts",
  "ImageMagick-6",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "libreoffice",
  "localtime",
  "mime.types",
  "nsswitch.conf",
  "os-release",
  "profile",
  "profile.d",
  "protocols",
  "services",
  "ssl/certs",
  "timezone"
]

/** The descriptors bwrap reads or writes (see the header); the process's `inputs` go to 4, 5, ... in order. */
const fds = { status: 3, args: 4, seccomp: 5, passwd: 6, group: 7, userns: 10 } as const

export interface HostLayout {
  readonly args: ReadonlyArray<string>
  /** The compiled seccomp filter for this machine (SeccompFilter.program). */
  readonly seccomp: Uint8Array
}

const kindOf = (path: string): "dir" | "file" | "link" | undefined => {
  const stat = lstatSync(path, { throwIfNoEntry: false })
  return stat === undefined ? undefined : stat.isSymbolicLink() ? "link" : stat.isDirectory() ? "dir" : "file"
}

/**
 * `--dir` (mode 0755) for the directories the binds at `insides` go in: bubblewrap 0.8 makes a bind's
 * missing parents mode 0700, which the sandbox user (not their owner when bwrap runs as root) could
 * not pass.
 */
const parentsOf = (insides: ReadonlyArray<string>): Array<string> =>
  [...new Set(insides.map((inside) => dirname(inside)).filter((dir) => dir !== "/"))].flatMap((dir) => ["--dir", dir])

/** Reads the host once: which system directories exist and which are links. */
export const hostLayout = (seccomp: Uint8Array): HostLayout => {
  const args: Array<string> = []
  for (const dir of systemDirs) {
    const kind = kindOf(dir)
    if (kind === "dir") args.push("--ro-bind", dir, dir)
    else if (kind === "link") args.push("--symlink", readlinkSync(dir), dir)
  }
  const etc = etcEntries.map((entry) => `/etc/${entry}`).filter((path) => kindOf(path) !== undefined)
  args.push(...parentsOf(etc))
  // ro-bind follows a link (os-release, localtime), so the target's content appears.
  for (const path of etc) args.push("--ro-bind-try", path, path)
  args.push("--perms", "0444", "--file", String(fds.passwd), "/etc/passwd")
  args.push("--perms", "0444", "--file", String(fds.group), "/etc/group")
  return { args, seccomp }
}

/** /etc/passwd and /etc/group of every sandbox: root, the sandbox user, nobody. */
export const passwd =
  `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${innerUid}:${innerUid}:sandbox:${mountPoint}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`
export const group = `root:x:0:\nsandbox:x:${innerUid}:\nnogroup:x:65534:\n`

export interface CommandLimits {
  readonly cpuSeconds: number
  readonly memoryBytes: number
  readonly processes: number
  readonly fileSizeBytes: number
  readonly tmpBytes: number
}

/** Where the egress proxy's socket appears inside, and the loopback port the bridge serves it on. */
export const egressSocket = "/run/svc-egress.sock"
export const proxyPort = 3128
export const proxyUrl = `http://127.0.0.1:${proxyPort}`

/** Where the workspace's ports directory appears inside: a `<port>.sock` per running service port (WorkspaceServices). */
export const portsMount = "/run/svc-ports"

/** A port as /proc/net/tcp writes it. */
export const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, "0")

/**
 * `socat` serves each unix socket on 127.0.0.1:<port> inside the sandbox, and the command starts
 * once every bridge listens (bash's /dev/tcp would open a connection; /proc/net/tcp does not).
 * With a network (restricted or public) the sandbox still has no route out: the egress proxy's
 * socket is bound in and bridged on 127.0.0.1:3128 for HTTP(S)_PROXY. Each running service's port
 * is bridged the same way from its socket in the ports directory.
 */
const bridges = (pairs: ReadonlyArray<{ readonly port: number; readonly socket: string }>): string =>
  pairs.length === 0
    ? ""
    : pairs.map(({ port, socket }) =>
      `socat TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${socket} 2>/dev/null &\n`
    ).join("") +
      `for _ in $(seq 1 500); do ${
        pairs.map(({ port }) => `grep -q ' 0100007F:${hexPort(port)} 00000000:0000 0A' /proc/net/tcp`).join(" && ")
      } && break; sleep 0.01; done\n`

/** The ports directory of a workspace: `dir` on the host; `connect`: the ports bridged to 127.0.0.1 inside. */
export interface PortsBinding {
  readonly dir: string
  /** Services bind it read-write (their own socket is made there); commands read-only. */
  readonly writable: boolean
  readonly connect: ReadonlyArray<number>
}

/** A host directory bound read-only inside the sandbox (never under /workspace). */
export interface ReadOnlyBinding {
  readonly host: string
  readonly inside: string
}

/** NUL-separated, as bwrap reads `--args`. */
const nulSeparated = (args: ReadonlyArray<string>): Uint8Array => Buffer.from(args.map((arg) => `${arg}\0`).join(""))

export interface Command {
  readonly file: string
  readonly args: ReadonlyArray<string>
  /** Written to fds 4, 5, ... of the process: bwrap's options, the seccomp program, passwd, group. */
  readonly inputs: ReadonlyArray<Uint8Array>
}

/**
 * As root: the user namespace the command ends in, made before bwrap starts and handed to it on fd 10
 * (`--userns2`). A holder process, as the workspace's host uid, makes a namespace P whose root is that
 * uid and raises no more than one namespace in it (so nothing inside can nest one), then a child U of
 * P whose uid 1000 is P's root; bwrap opens U once the holder says it is ready, and the holder ends.
 * bwrap itself stays the host's root until its mounts are made, so the kernel prints no `uid=` for
 * the tmpfs mounts (it does for any owner but root), then joins U, where the command drops to uid
 * 1000: the host uid on the disk, and `/proc/self/uid_map` reads `1000 0 1`. Runs under `bash -p`
 * (no BASH_ENV, ENV or imported functions); the descriptors 3-9 stay bwrap's.
 */
const userNamespace = [
  `w=$1; shift`,
  `coproc holder { exec 3>&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- setpriv --reuid="$w" --regid="$w" --clear-groups -- ` +
  `unshare --user --map-root-user -- sh -c 'echo 1 >/proc/sys/user/max_user_namespaces && ` +
  `exec unshare --user --map-user=${innerUid} --map-group=${innerUid} -- sh -c "echo ready && exec sleep 60"'; }`,
  `r=\${holder[0]}; o=\${holder[1]}; p=$holder_PID`,
  `IFS= read -r ready <&"$r"`,
  `[ "$ready" = ready ] && exec ${fds.userns}</proc/"$p"/ns/user || { echo "svc-sandbox: could not make the sandbox's user namespace" >&2; exit 125; }`,
  `exec {r}<&- {o}>&-; { kill -KILL "$p"; wait "$p"; } 2>/dev/null`,
  `exec "$@"`
].join("\n")

/** As root, the first program inside: drops from the host's root (no capabilities but these three, in U only) to uid 1000 for good. */
const dropToSandboxUser = [
  "setpriv",
  `--reuid=${innerUid}`,
  `--regid=${innerUid}`,
  "--keep-groups",
  "--inh-caps=-all",
  "--ambient-caps=-all",
  "--bounding-set=-all",
  "--"
]

/** Runs `command` with bash in `cwd` (absolute, inside); a missing cwd exits 2 with a clear message. */
export const argv = (input: {
  /** Host uid (and gid) of the workspace (the service runs as root); undefined: the service's own (not root). */
  readonly uid: number | undefined
  readonly layout: HostLayout
  readonly workspaceDir: string
  readonly limits: CommandLimits
  readonly cwd: string
  readonly command: string
  /** The host path of the workspace's egress proxy socket; undefined: offline. */
  readonly egress: string | undefined
  readonly ports?: PortsBinding | undefined
  /** Host directories bound read-only at `inside` (the document worker's code: src/documents/DocumentRuntime.ts). */
  readonly readOnly?: ReadonlyArray<ReadOnlyBinding> | undefined
}): Command => {
  const { limits, uid, ports } = input
  // prlimit first, so that the holder's namespaces carry the limits too: the kernel counts RLIMIT_NPROC at
  // each user namespace up to the host against the limit its creator had, so the workspace's uid has
  // `processes` on the whole host, across its sandboxes (bwrap and the root chain are exempt as root).
  const limit = [
    "prlimit",
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--as=${limits.memoryBytes}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.fileSizeBytes}`,
    "--core=0",
    "--nofile=1024",
    "--"
  ]
  // pdeathsig: if the service process dies (even kill -9), the sandbox goes with it.
  const [file = "prlimit", ...before] = uid === undefined ? limit : [
    "setpriv",
    "--pdeathsig=KILL",
    "--clear-groups",
    "--",
    ...limit,
    "bash",
    "--noprofile",
    "--norc",
    "-p",
    "-c",
    userNamespace,
    "svc-userns",
    String(uid),
    "unshare",
    "--pid",
    "--fork",
    "--kill-child",
    "--"
  ]
  const namespaces = uid === undefined
    ? ["--unshare-all", "--unshare-user", "--disable-userns", "--uid", String(innerUid), "--gid", String(innerUid)]
    : [
      "--unshare-ipc",
      "--unshare-pid",
      "--unshare-net",
      "--unshare-uts",
      "--unshare-cgroup-try",
      "--userns2",
      String(fds.userns),
      "--assert-userns-disabled",
      "--cap-drop",
      "ALL",
      ...["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"].flatMap((cap) => ["--cap-add", cap])
    ]
  const options = [
    ...namespaces,
    "--hostname",
    "workspace",
    "--die-with-parent",
    "--new-session",
    "--json-status-fd",
    String(fds.status),
    "--seccomp",
    String(fds.seccomp),
    ...input.layout.args,
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    String(Math.min(limits.tmpBytes, 64 * 1024 * 1024)),
    "--perms",
    "1777",
    "--tmpfs",
    "/dev/shm",
    "--remount-ro",
    "/dev",
    "--size",
    String(limits.tmpBytes),
    "--perms",
    "1777",
    "--tmpfs",
    "/tmp",
    "--bind",
    input.workspaceDir,
    mountPoint,
    ...parentsOf([
      ...(input.egress === undefined ? [] : [egressSocket]),
      ...(ports === undefined ? [] : [portsMount]),
      ...(input.readOnly ?? []).map(({ inside }) => inside)
    ]),
    ...(input.egress === undefined ? [] : ["--ro-bind", input.egress, egressSocket]),
    ...(ports === undefined ? [] : [ports.writable ? "--bind" : "--ro-bind", ports.dir, portsMount]),
    ...(input.readOnly ?? []).flatMap(({ host, inside }) => ["--ro-bind", host, inside]),
    "--remount-ro",
    "/",
    // As root bwrap cannot enter the workspace (the workspace's uid only); the command's shell changes there.
    "--chdir",
    "/"
  ]
  return {
    file,
    args: [
      ...before,
      "bwrap",
      "--args",
      String(fds.args),
      "--",
      ...(uid === undefined ? [] : dropToSandboxUser),
      "bash",
      "--noprofile",
      "--norc",
      "-c",
      `${uid === undefined ? "" : `exec ${fds.userns}<&-\n`}${
        bridges([
          ...(input.egress === undefined ? [] : [{ port: proxyPort, socket: egressSocket }]),
          ...(ports?.connect ?? []).map((port) => ({ port, socket: `${portsMount}/${port}.sock` }))
        ])
      }cd -- "$1" 2>/dev/null || { printf 'no such directory in the workspace: %s\\n' "$1" >&2; exit 2; }; exec bash -lc "$2"`,
      "svc-sandbox",
      input.cwd,
      input.command
    ],
    inputs: [nulSeparated(options), input.layout.seccomp, Buffer.from(passwd), Buffer.from(group)]
  }
}
