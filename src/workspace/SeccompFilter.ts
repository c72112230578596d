/**
 * The sandbox's seccomp filter as the kernel runs it: SeccompProfile compiled, for the machine's
 * architecture, into a classic BPF program (`struct sock_filter[]`, 8 bytes an instruction), which
 * bubblewrap installs (`--seccomp FD`) on the sandbox's init and command just before they start.
 *
 * The program checks the ABI first (a call made through another ABI, i386's int 0x80 or x32 on
 * x86_64, fails with EPERM: its numbers mean other calls), then the calls with a rule of their own,
 * then the allowed numbers as sorted ranges; every jump is short (at most a few instructions), so
 * the program has no limit of 256 to mind, and a number below the next range is refused at once.
 */
import { endianness } from "node:os"
import * as Profile from "./SeccompProfile.ts"
import { type Arch, numberOf } from "./SyscallNumbers.ts"

interface Instruction {
  readonly code: number
  readonly jt: number
  readonly jf: number
  readonly k: number
}

// linux/filter.h and linux/bpf_common.h
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGT_K = 0x25
const JGE_K = 0x35
const JSET_K = 0x45
const RET_K = 0x06
// linux/seccomp.h
const RET_ALLOW = 0x7fff0000
const RET_ERRNO = 0x00050000
const EPERM = 1
// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
const offsetNr = 0
const offsetArch = 4
const littleEndian = endianness() === "LE"
/** The low 32 bits of args[0]. */
const offsetArg0 = 16 + (littleEndian ? 0 : 4)
// linux/audit.h
const auditArch: Record<Arch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 }
/** Set in the number of every x32 call (same AUDIT_ARCH as x86_64). */
const x32Bit = 0x40000000

const op = (code: number, k: number, jt = 0, jf = 0): Instruction => ({ code, jt, jf, k: k >>> 0 })
const allow = op(RET_K, RET_ALLOW)
const fail = (errno: number) => op(RET_K, RET_ERRNO | errno)
const deny = fail(EPERM)

/** `body` runs when the number is `nr` (and must return); otherwise the program goes on after it. */
const when = (nr: number, body: ReadonlyArray<Instruction>): ReadonlyArray<Instruction> => [
  op(JEQ_K, nr, 0, body.length),
  ...body
]

const ruleBody = (rule: Profile.ArgRule): ReadonlyArray<Instruction> => {
  const load = op(LD_W_ABS, offsetArg0)
  switch (rule._tag) {
    case "NoBits":
      return [load, op(JSET_K, rule.mask, 1, 0), allow, deny]
    case "OneOf":
      // The i-th comparison jumps over the comparisons after it and the deny, to the allow.
      return [load, ...rule.values.map((value, i) => op(JEQ_K, value, rule.values.length - i, 0)), deny, allow]
    case "NoneOf":
      return [load, ...rule.values.map((value, i) => op(JEQ_K, value, rule.values.length - i, 0)), allow, deny]
  }
}

/** Sorted, merged runs of consecutive numbers. */
const rangesOf = (numbers: ReadonlyArray<number>): ReadonlyArray<readonly [number, number]> => {
  const ranges: Array<[number, number]> = []
  for (const n of [...new Set(numbers)].sort((a, b) => a - b)) {
    const last = ranges.at(-1)
    if (last !== undefined && last[1] === n - 1) last[1] = n
    else ranges.push([n, n])
  }
  return ranges
}

const defined = (n: number | undefined): n is number => n !== undefined

/** The numbers `arch` allows unconditionally. */
export const allowedNumbers = (arch: Arch): ReadonlyArray<number> =>
  [...Profile.allowed, ...Profile.allowedOn[arch]].map((name) => numberOf(arch, name)).filter(defined)

export const instructions = (arch: Arch): ReadonlyArray<Instruction> => {
  const number = (name: string) => numberOf(arch, name)
  return [
    op(LD_W_ABS, offsetArch),
    op(JEQ_K, auditArch[arch], 1, 0),
    deny,
    op(LD_W_ABS, offsetNr),
    ...(arch === "x86_64" ? [op(JGE_K, x32Bit, 0, 1), deny] : []),
    ...Profile.errnoOf.flatMap(({ errno, name }) => {
      const nr = number(name)
      return nr === undefined ? [] : when(nr, [fail(errno)])
    }),
    ...Profile.argRules.flatMap(({ name, rule }) => {
      const nr = number(name)
      return nr === undefined ? [] : when(nr, ruleBody(rule))
    }),
    // Below this range (and above the last): not allowed. In it: allowed. Above it: the next range.
    ...rangesOf(allowedNumbers(arch)).flatMap(([from, to]) => [
      op(JGE_K, from, 1, 0),
      deny,
      op(JGT_K, to, 1, 0),
      allow
    ]),
    deny
  ]
}

/** The program's bytes, as bubblewrap reads them from its `--seccomp` descriptor. */
export const program = (arch: Arch): Uint8Array => {
  const code = instructions(arch)
  const bytes = Buffer.alloc(code.length * 8)
  code.forEach(({ code, jf, jt, k }, i) => {
    if (littleEndian) {
      bytes.writeUInt16LE(code, i * 8)
      bytes.writeUInt32LE(k, i * 8 + 4)
    } else {
      bytes.writeUInt16BE(code, i * 8)
      bytes.writeUInt32BE(k, i * 8 + 4)
    }
    bytes.writeUInt8(jt, i * 8 + 2)
    bytes.writeUInt8(jf, i * 8 + 3)
  })
  return bytes
}

/** The filter's architecture for Node's `process.arch`; undefined where the sandbox has no filter. */
export const archOf = (nodeArch: string): Arch | undefined =>
  nodeArch === "x64" ? "x86_64" : nodeArch === "arm64" ? "aarch64" : undefined
