/**
 * System call numbers of the two architectures the sandbox's seccomp filter is built for, for
 * every call SeccompProfile names. They come from the kernel's own tables (x86_64:
 * arch/x86/entry/syscalls/syscall_64.tbl; aarch64: the generic table, scripts/syscall.tbl, once
 * include/uapi/asm-generic/unistd.h), as libseccomp collects them in its src/syscalls.csv (kernel
 * 7.1); the x86_64 numbers agree with Debian 12's <asm/unistd_64.h> (kernel 6.1) for every call it
 * has. Each entry is `name x86_64 aarch64`, `-` where the architecture has no such call (aarch64
 * has only the *at forms of the old path calls, for instance).
 */

export type Arch = "x86_64" | "aarch64"

const table = `
accept 43 202  accept4 288 242  access 21 -  acct 163 89  add_key 248 217  adjtimex 159 171  alarm 37 -
arch_prctl 158 -  bind 49 200  bpf 321 280  brk 12 214  cachestat 451 451  capget 125 90  capset 126 91  chdir 80 49
chmod 90 -  chown 92 -  chroot 161 51  clock_adjtime 305 266  clock_getres 229 114  clock_gettime 228 113
clock_nanosleep 230 115  clock_settime 227 112  clone 56 220  clone3 435 435  close 3 57  close_range 436 436
connect 42 203  copy_file_range 326 285  creat 85 -  delete_module 176 106  dup 32 23  dup2 33 -  dup3 292 24
epoll_create 213 -  epoll_create1 291 20  epoll_ctl 233 21  epoll_ctl_old 214 -  epoll_pwait 281 22
epoll_pwait2 441 441  epoll_wait 232 -  epoll_wait_old 215 -  eventfd 284 -  eventfd2 290 19  execve 59 221
execveat 322 281  exit 60 93  exit_group 231 94  faccessat 269 48  faccessat2 439 439  fadvise64 221 223
fallocate 285 47  fanotify_init 300 262  fanotify_mark 301 263  fchdir 81 50  fchmod 91 52  fchmodat 268 53
fchmodat2 452 452  fchown 93 55  fchownat 260 54  fcntl 72 25  fdatasync 75 83  fgetxattr 193 10
finit_module 313 273  flistxattr 196 13  flock 73 32  fork 57 -  fremovexattr 199 16  fsconfig 431 431
fsetxattr 190 7  fsmount 432 432  fsopen 430 430  fspick 433 433  fstat 5 80  fstatfs 138 44  fsync 74 82
ftruncate 77 46  futex 202 98  futex_requeue 456 456  futex_wait 455 455  futex_waitv 449 449  futex_wake 454 454
futimesat 261 -  get_mempolicy 239 236  get_robust_list 274 100  get_thread_area 211 -  getcpu 309 168  getcwd 79 17
getdents 78 -  getdents64 217 61  getegid 108 177  geteuid 107 175  getgid 104 176  getgroups 115 158
getitimer 36 102  getpeername 52 205  getpgid 121 155  getpgrp 111 -  getpid 39 172  getppid 110 173
getpriority 140 141  getrandom 318 278  getresgid 120 150  getresuid 118 148  getrlimit 97 163  getrusage 98 165
getsid 124 156  getsockname 51 204  getsockopt 55 209  gettid 186 178  gettimeofday 96 169  getuid 102 174
getxattr 191 8  getxattrat 464 464  init_module 175 105  inotify_add_watch 254 27  inotify_init 253 -
inotify_init1 294 26  inotify_rm_watch 255 28  io_cancel 210 3  io_destroy 207 1  io_getevents 208 4
io_pgetevents 333 292  io_setup 206 0  io_submit 209 2  io_uring_enter 426 426  io_uring_register 427 427
io_uring_setup 425 425  ioctl 16 29  ioperm 173 -  iopl 172 -  ioprio_get 252 31  ioprio_set 251 30  kcmp 312 272
kexec_file_load 320 294  kexec_load 246 104  keyctl 250 219  kill 62 129  landlock_add_rule 445 445
landlock_create_ruleset 444 444  landlock_restrict_self 446 446  lchown 94 -  lgetxattr 192 9  link 86 -
linkat 265 37  listen 50 201  listmount 458 458  listxattr 194 11  listxattrat 465 465  llistxattr 195 12
lookup_dcookie 212 18  lremovexattr 198 15  lseek 8 62  lsetxattr 189 6  lstat 6 -  madvise 28 233
map_shadow_stack 453 453  mbind 237 235  membarrier 324 283  memfd_create 319 279  memfd_secret 447 447
migrate_pages 256 238  mincore 27 232  mkdir 83 -  mkdirat 258 34  mknod 133 -  mknodat 259 33  mlock 149 228
mlock2 325 284  mlockall 151 230  mmap 9 222  modify_ldt 154 -  mount 165 40  mount_setattr 442 442
move_mount 429 429  move_pages 279 239  mprotect 10 226  mq_getsetattr 245 185  mq_notify 244 184  mq_open 240 180
mq_timedreceive 243 183  mq_timedsend 242 182  mq_unlink 241 181  mremap 25 216  mseal 462 462  msgctl 71 187
msgget 68 186  msgrcv 70 188  msgsnd 69 189  msync 26 227  munlock 150 229  munlockall 152 231  munmap 11 215
name_to_handle_at 303 264  nanosleep 35 101  newfstatat 262 79  open 2 -  open_by_handle_at 304 265
open_tree 428 428  openat 257 56  openat2 437 437  pause 34 -  perf_event_open 298 241  personality 135 92
pidfd_getfd 438 438  pidfd_open 434 434  pidfd_send_signal 424 424  pipe 22 -  pipe2 293 59  pivot_root 155 41
pkey_alloc 330 289  pkey_free 331 290  pkey_mprotect 329 288  poll 7 -  ppoll 271 73  prctl 157 167  pread64 17 67
preadv 295 69  preadv2 327 286  prlimit64 302 261  process_madvise 440 440  process_mrelease 448 448
process_vm_readv 310 270  process_vm_writev 311 271  pselect6 270 72  ptrace 101 117  pwrite64 18 68  pwritev 296 70
pwritev2 328 287  quotactl 179 60  quotactl_fd 443 443  read 0 63  readahead 187 213  readlink 89 -
readlinkat 267 78  readv 19 65  reboot 169 142  recvfrom 45 207  recvmmsg 299 243  recvmsg 47 212
remap_file_pages 216 234  removexattr 197 14  removexattrat 466 466  rename 82 -  renameat 264 38  renameat2 316 276
request_key 249 218  restart_syscall 219 128  rmdir 84 -  rseq 334 293  rt_sigaction 13 134  rt_sigpending 127 136
rt_sigprocmask 14 135  rt_sigqueueinfo 129 138  rt_sigreturn 15 139  rt_sigsuspend 130 133  rt_sigtimedwait 128 137
rt_tgsigqueueinfo 297 240  sched_get_priority_max 146 125  sched_get_priority_min 147 126  sched_getaffinity 204 123
sched_getattr 315 275  sched_getparam 143 121  sched_getscheduler 145 120  sched_rr_get_interval 148 127
sched_setaffinity 203 122  sched_setattr 314 274  sched_setparam 142 118  sched_setscheduler 144 119
sched_yield 24 124  seccomp 317 277  select 23 -  semctl 66 191  semget 64 190  semop 65 193  semtimedop 220 192
sendfile 40 71  sendmmsg 307 269  sendmsg 46 211  sendto 44 206  set_mempolicy 238 237  set_robust_list 273 99
set_thread_area 205 -  set_tid_address 218 96  setdomainname 171 162  setfsgid 123 152  setfsuid 122 151
setgid 106 144  setgroups 116 159  sethostname 170 161  setitimer 38 103  setns 308 268  setpgid 109 154
setpriority 141 140  setregid 114 143  setresgid 119 149  setresuid 117 147  setreuid 113 145  setrlimit 160 164
setsid 112 157  setsockopt 54 208  settimeofday 164 170  setuid 105 146  setxattr 188 5  setxattrat 463 463
shmat 30 196  shmctl 31 195  shmdt 67 197  shmget 29 194  shutdown 48 210  sigaltstack 131 132  signalfd 282 -
signalfd4 289 74  socket 41 198  socketpair 53 199  splice 275 76  stat 4 -  statfs 137 43  statmount 457 457
statx 332 291  swapoff 168 225  swapon 167 224  symlink 88 -  symlinkat 266 36  sync 162 81  sync_file_range 277 84
syncfs 306 267  sysinfo 99 179  syslog 103 116  tee 276 77  tgkill 234 131  time 201 -  timer_create 222 107
timer_delete 226 111  timer_getoverrun 225 109  timer_gettime 224 108  timer_settime 223 110  timerfd_create 283 85
timerfd_gettime 287 87  timerfd_settime 286 86  times 100 153  tkill 200 130  truncate 76 45  umask 95 166
umount2 166 39  uname 63 160  unlink 87 -  unlinkat 263 35  unshare 272 97  uretprobe 335 -  userfaultfd 323 282
utime 132 -  utimensat 280 88  utimes 235 -  vfork 58 -  vhangup 153 58  vmsplice 278 75  wait4 61 260  waitid 247 95
write 1 64  writev 20 66
`

const parse = (text: string): ReadonlyMap<string, Readonly<Record<Arch, number | undefined>>> => {
  const words = text.trim().split(/\s+/)
  const entries = new Map<string, Record<Arch, number | undefined>>()
  const number = (word: string | undefined) => (word === undefined || word === "-" ? undefined : Number(word))
  for (let i = 0; i + 2 < words.length; i += 3) {
    entries.set(words[i] ?? "", { x86_64: number(words[i + 1]), aarch64: number(words[i + 2]) })
  }
  return entries
}

const numbers = parse(table)

/** Every name the table holds (the profile's tests check that each name it uses is here). */
export const known: ReadonlySet<string> = new Set(numbers.keys())

/** The call's number on `arch`; undefined when that architecture has no such call. */
export const numberOf = (arch: Arch, name: string): number | undefined => numbers.get(name)?.[arch]
