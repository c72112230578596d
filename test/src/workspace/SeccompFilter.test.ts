/**
 * The seccomp program as the kernel would run it, on both architectures (only the machine's own
 * can run for real: SandboxSeccomp.test.ts): the bytes bubblewrap reads are decoded and executed
 * by a small classic-BPF interpreter, the way the kernel evaluates `struct seccomp_data`, over a
 * table of calls. The profile's lists are checked against each other and the number table.
 */
import { assert, describe, it } from "@effect/vitest"
import { endianness } from "node:os"
import * as SeccompFilter from "../../../src/workspace/SeccompFilter.ts"
import * as Profile from "../../../src/workspace/SeccompProfile.ts"
import { type Arch, known, numberOf } from "../../../src/workspace/SyscallNumbers.ts"

const auditArch: Record<Arch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 }
const AUDIT_ARCH_I386 = 0x40000003
const le = endianness() === "LE"
const u16 = (b: Buffer, at: number) => (le ? b.readUInt16LE(at) : b.readUInt16BE(at))
const u32 = (b: Buffer, at: number) => (le ? b.readUInt32LE(at) : b.readUInt32BE(at))

type Verdict = "allow" | `errno ${number}` | `other ${number}`

/** Runs the program on one call: struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6] }, native order. */
const run = (bytes: Uint8Array, arch: number, nr: number, arg0 = 0): Verdict => {
  const program = Buffer.from(bytes)
  const data = Buffer.alloc(64)
  if (le) {
    data.writeInt32LE(nr, 0)
    data.writeUInt32LE(arch, 4)
    data.writeBigUInt64LE(BigInt(arg0), 16)
  } else {
    data.writeInt32BE(nr, 0)
    data.writeUInt32BE(arch, 4)
    data.writeBigUInt64BE(BigInt(arg0), 16)
  }
  let a = 0
  let pc = 0
  while (pc < program.length / 8) {
    const code = u16(program, pc * 8)
    const k = u32(program, pc * 8 + 4)
    const jump = (taken: boolean) => pc + 1 + program.readUInt8(pc * 8 + (taken ? 2 : 3))
    if (code === 0x06) {
      return k === 0x7fff0000 ? "allow" : (k & 0xffff0000) === 0x00050000 ? `errno ${k & 0xffff}` : `other ${k}`
    }
    if (code === 0x20) { // ld [k]
      a = u32(data, k)
      pc++
    } else if (code === 0x15) pc = jump(a === k)
    else if (code === 0x25) pc = jump(a > k)
    else if (code === 0x35) pc = jump(a >= k)
    else if (code === 0x45) pc = jump((a & k) !== 0)
    else return `other ${code}` // an instruction this program should not have
  }
  return "other -1" // ran off its end, which the kernel refuses to load
}

const arches: ReadonlyArray<Arch> = ["x86_64", "aarch64"]
const nr = (arch: Arch, name: string): number => numberOf(arch, name) ?? -1

// Calls every workload makes, and some a workspace never needs (EPERM) or must be told do not exist (ENOSYS).
const cases: ReadonlyArray<readonly [name: string, arg0: number | undefined, verdict: Verdict]> = [
  ["read", undefined, "allow"],
  ["openat", undefined, "allow"],
  ["execve", undefined, "allow"],
  ["socket", 2, "allow"], // AF_INET
  ["socket", 1, "allow"], // AF_UNIX
  ["socket", 40, "errno 1"], // AF_VSOCK
  ["socket", 38, "errno 1"], // AF_ALG
  ["clone", 0x01200011, "allow"], // fork(): CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
  ["clone", 0x003d0f00, "allow"], // a thread
  ["clone", 0x10000011, "errno 1"], // CLONE_NEWUSER
  ["clone", 0x40000011, "errno 1"], // CLONE_NEWNET
  ["clone", 0x00020011, "errno 1"], // CLONE_NEWNS
  ["clone3", undefined, "errno 38"],
  ["personality", 0xffffffff, "allow"],
  ["personality", 0, "allow"],
  ["personality", 0x0040000, "errno 1"], // ADDR_NO_RANDOMIZE
  ["ptrace", 0, "errno 1"],
  ["process_vm_readv", undefined, "errno 1"],
  ["unshare", 0x10000000, "errno 1"],
  ["setns", undefined, "errno 1"],
  ["mount", undefined, "errno 1"],
  ["umount2", undefined, "errno 1"],
  ["pivot_root", undefined, "errno 1"],
  ["io_uring_setup", undefined, "errno 1"],
  ["keyctl", undefined, "errno 1"],
  ["add_key", undefined, "errno 1"],
  ["bpf", undefined, "errno 1"],
  ["perf_event_open", undefined, "errno 1"],
  ["userfaultfd", undefined, "errno 1"],
  ["kexec_load", undefined, "errno 1"],
  ["finit_module", undefined, "errno 1"],
  ["reboot", undefined, "errno 1"],
  ["clock_settime", undefined, "errno 1"],
  ["swapon", undefined, "errno 1"],
  ["acct", undefined, "errno 1"]
]

describe("the sandbox's seccomp program", () => {
  for (const arch of arches) {
    const program = SeccompFilter.program(arch)
    const native = auditArch[arch]

    it(`${arch}: each call gets its verdict`, () => {
      const verdicts = cases.map(([name, arg0]) => run(program, native, nr(arch, name), arg0))
      assert.deepStrictEqual(verdicts, cases.map(([, , verdict]) => verdict))
    })

    it(`${arch}: every allowed number and nothing else below 1024 is allowed; a foreign ABI gets EPERM`, () => {
      const allowed = new Set(SeccompFilter.allowedNumbers(arch))
      const ruled = new Set(
        [...Profile.argRules, ...Profile.errnoOf].map(({ name }) => numberOf(arch, name))
      )
      for (let n = 0; n < 1024; n++) {
        if (ruled.has(n)) continue
        assert.strictEqual(run(program, native, n), allowed.has(n) ? "allow" : "errno 1", `call ${n}`)
      }
      assert.strictEqual(run(program, AUDIT_ARCH_I386, nr(arch, "read")), "errno 1")
      assert.isBelow(program.length / 8, 4096) // BPF_MAXINSNS
    })
  }

  it("x86_64: x32 calls (the 0x40000000 bit) get EPERM", () => {
    const program = SeccompFilter.program("x86_64")
    assert.strictEqual(run(program, auditArch.x86_64, 0x40000000 + nr("x86_64", "read")), "errno 1")
  })

  it("the lists agree: what the profile names has a number, nothing denied is allowed, nothing ruled is in the plain list", () => {
    // Only Moby's list may name calls of other ABIs (chown32, _llseek, socketcall, ...): they have no number here.
    const ours = [
      ...Profile.allowedOn.x86_64,
      ...Profile.argRules.map((r) => r.name),
      ...Profile.errnoOf.map((r) => r.name),
      ...Profile.denied
    ]
    assert.deepStrictEqual(ours.filter((name) => !known.has(name)), [])
    assert.isAbove(Profile.allowed.filter((name) => known.has(name)).length, 280)
    const plain = new Set([...Profile.allowed, ...Profile.allowedOn.x86_64, ...Profile.allowedOn.aarch64])
    assert.deepStrictEqual(Profile.denied.filter((name) => plain.has(name)), [])
    assert.deepStrictEqual([...Profile.argRules, ...Profile.errnoOf].map((r) => r.name).filter((n) => plain.has(n)), [])
  })
})
