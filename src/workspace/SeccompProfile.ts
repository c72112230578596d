/**
 * What the sandbox's seccomp filter lets a sandboxed process call. The base is Moby's default
 * seccomp profile, the one Docker applies to every container (github.com/moby/profiles, seccomp
 * v0.2.3, vendored by Docker 29), as it applies to a container granted no extra capability: its
 * list of always-allowed calls, its x86_64-only calls, and its argument rules (clone without
 * namespace flags, clone3 answered ENOSYS so that the C library falls back to clone, personality
 * with the five values it lists, socket but AF_ALG and AF_VSOCK). Every other call fails with
 * EPERM, as in Moby's profile (its defaultErrnoRet).
 *
 * One change, stricter than Docker: ptrace, process_vm_readv and process_vm_writev, which Moby
 * allows on kernels from 4.8, are denied; a workspace has no business tracing or reading another
 * process, even one of its own (strace and gdb do not work inside).
 *
 * Calls of 32-bit ABIs (i386 through int 0x80, x32) fail with EPERM as a whole: the filter knows
 * only the native table (SeccompFilter).
 */
import type { Arch } from "./SyscallNumbers.ts"

const words = (text: string): ReadonlyArray<string> => text.trim().split(/\s+/)

/** Moby's always-allowed calls, as the profile lists them (names of 32-bit ABIs have no number here and are skipped). */
export const allowed = words(`
accept accept4 access adjtimex alarm bind brk cachestat capget capset chdir chmod chown chown32 clock_adjtime
clock_adjtime64 clock_getres clock_getres_time64 clock_gettime clock_gettime64 clock_nanosleep
clock_nanosleep_time64 close close_range connect copy_file_range creat dup dup2 dup3 epoll_create epoll_create1
epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2 execve execveat exit
exit_group faccessat faccessat2 fadvise64 fadvise64_64 fallocate fanotify_mark fchdir fchmod fchmodat fchmodat2
fchown fchown32 fchownat fcntl fcntl64 fdatasync fgetxattr flistxattr flock fork fremovexattr fsetxattr fstat
fstat64 fstatat64 fstatfs fstatfs64 fsync ftruncate ftruncate64 futex futex_requeue futex_time64 futex_wait
futex_waitv futex_wake futimesat getcpu getcwd getdents getdents64 getegid getegid32 geteuid geteuid32 getgid
getgid32 getgroups getgroups32 getitimer getpeername getpgid getpgrp getpid getppid getpriority getrandom getresgid
getresgid32 getresuid getresuid32 getrlimit get_robust_list getrusage getsid getsockname getsockopt get_thread_area
gettid gettimeofday getuid getuid32 getxattr getxattrat inotify_add_watch inotify_init inotify_init1
inotify_rm_watch io_cancel ioctl io_destroy io_getevents io_pgetevents io_pgetevents_time64 ioprio_get ioprio_set
io_setup io_submit ipc kill landlock_add_rule landlock_create_ruleset landlock_restrict_self lchown lchown32
lgetxattr link linkat listen listmount listxattr listxattrat llistxattr _llseek lremovexattr lseek lsetxattr lstat
lstat64 madvise map_shadow_stack membarrier memfd_create memfd_secret mincore mkdir mkdirat mknod mknodat mlock
mlock2 mlockall mmap mmap2 mprotect mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedreceive_time64
mq_timedsend mq_timedsend_time64 mq_unlink mremap mseal msgctl msgget msgrcv msgsnd msync munlock munlockall munmap
name_to_handle_at nanosleep newfstatat _newselect open openat openat2 pause pidfd_open pidfd_send_signal pipe pipe2
pkey_alloc pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl pread64 preadv preadv2 prlimit64 process_mrelease
pselect6 pselect6_time64 pwrite64 pwritev pwritev2 read readahead readlink readlinkat readv recv recvfrom recvmmsg
recvmmsg_time64 recvmsg remap_file_pages removexattr removexattrat rename renameat renameat2 restart_syscall
riscv_hwprobe rmdir rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo rt_sigreturn rt_sigsuspend
rt_sigtimedwait rt_sigtimedwait_time64 rt_tgsigqueueinfo sched_getaffinity sched_getattr sched_getparam
sched_get_priority_max sched_get_priority_min sched_getscheduler sched_rr_get_interval sched_rr_get_interval_time64
sched_setaffinity sched_setattr sched_setparam sched_setscheduler sched_yield seccomp select semctl semget semop
semtimedop semtimedop_time64 send sendfile sendfile64 sendmmsg sendmsg sendto setfsgid setfsgid32 setfsuid
setfsuid32 setgid setgid32 setgroups setgroups32 setitimer setpgid setpriority setregid setregid32 setresgid
setresgid32 setresuid setresuid32 setreuid setreuid32 setrlimit set_robust_list setsid setsockopt set_thread_area
set_tid_address setuid setuid32 setxattr setxattrat shmat shmctl shmdt shmget shutdown sigaltstack signalfd
signalfd4 sigprocmask sigreturn socketcall socketpair splice stat stat64 statfs statfs64 statmount statx symlink
symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create timer_delete timer_getoverrun
timer_gettime timer_gettime64 timer_settime timer_settime64 timerfd_create timerfd_gettime timerfd_gettime64
timerfd_settime timerfd_settime64 times tkill truncate truncate64 ugetrlimit umask uname unlink unlinkat uretprobe
utime utimensat utimensat_time64 utimes vfork vmsplice wait4 waitid waitpid write writev
`)

/** Allowed on one architecture only (Moby's `arches` includes). */
export const allowedOn: Readonly<Record<Arch, ReadonlyArray<string>>> = {
  x86_64: ["arch_prctl", "modify_ldt"],
  aarch64: []
}

/** A rule on the first argument (its low 32 bits, which is all these calls read). */
export type ArgRule =
  /** Allowed when the argument has none of these bits. */
  | { readonly _tag: "NoBits"; readonly mask: number }
  /** Allowed for these values only. */
  | { readonly _tag: "OneOf"; readonly values: ReadonlyArray<number> }
  /** Allowed but for these values. */
  | { readonly _tag: "NoneOf"; readonly values: ReadonlyArray<number> }

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
export const namespaceFlags = 0x7e020000
const AF_ALG = 38
const AF_VSOCK = 40

/** Calls decided by their first argument (Moby's `args` rules). */
export const argRules: ReadonlyArray<{ readonly name: string; readonly rule: ArgRule }> = [
  { name: "clone", rule: { _tag: "NoBits", mask: namespaceFlags } },
  // PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32|UNAME26, and 0xffffffff (a query).
  { name: "personality", rule: { _tag: "OneOf", values: [0x0, 0x8, 0x20000, 0x20008, 0xffffffff] } },
  { name: "socket", rule: { _tag: "NoneOf", values: [AF_ALG, AF_VSOCK] } }
]

/** Calls that fail with their own errno rather than EPERM. */
export const errnoOf: ReadonlyArray<{ readonly name: string; readonly errno: number }> = [
  // Its flags are behind a pointer a filter cannot read; ENOSYS makes glibc and musl use clone.
  { name: "clone3", errno: 38 }
]

/**
 * Calls a workspace never needs, denied because neither list above has them; named here so that
 * the documentation and the tests can point at them (the filter needs no list of what it denies).
 */
export const denied = words(`
unshare setns mount umount2 pivot_root fsopen fsmount fspick fsconfig open_tree move_mount mount_setattr ptrace
process_vm_readv process_vm_writev kcmp pidfd_getfd process_madvise io_uring_setup io_uring_enter io_uring_register
add_key request_key keyctl init_module finit_module delete_module bpf perf_event_open kexec_load kexec_file_load
userfaultfd acct swapon swapoff reboot settimeofday clock_settime chroot sethostname setdomainname syslog quotactl
quotactl_fd open_by_handle_at lookup_dcookie iopl ioperm vhangup mbind set_mempolicy get_mempolicy migrate_pages
move_pages fanotify_init
`)
