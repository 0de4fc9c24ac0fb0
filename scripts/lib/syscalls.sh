# Shared by the scripts: system calls counted by the kernel's own tracepoints (`perf stat`),
# which, unlike `strace`, does not stop the process at each call. strace's slowdown lets
# answers pile up between two reads, so under it a client read and wrote several answers at a
# time where at full speed it makes a call for each (BENCHMARKS.md, "A closed loop's poller").
#   syscall_events                  the `perf stat -e` list: the sys_enter tracepoints of the
#                                   calls a network client or server makes (those this kernel
#                                   has), and raw_syscalls:sys_enter, every call
#   syscalls_per_request FILE N     "all 2.07, sendto 1.00, ..." from `perf stat -x, -o FILE`:
#                                   every call, then each made at least once in a hundred of N
#                                   requests, per request, most first, and `other`: the calls
#                                   not in the list (futex, timers, sleeps), when as many

syscall_events() {
  local dir=/sys/kernel/tracing/events/syscalls names=() s
  [[ -d $dir ]] || dir=/sys/kernel/debug/tracing/events/syscalls
  for s in read write readv writev pread64 pwrite64 sendto recvfrom sendmsg recvmsg sendmmsg \
    recvmmsg sendfile64 splice epoll_wait epoll_pwait epoll_pwait2 epoll_ctl poll ppoll select \
    io_uring_enter sched_yield accept accept4 connect shutdown close fcntl setsockopt \
    getsockopt ioctl mmap munmap madvise brk mprotect openat statx newfstatat; do
    [[ -d $dir/sys_enter_$s ]] && names+=("syscalls:sys_enter_$s")
  done
  names+=(raw_syscalls:sys_enter)
  (IFS=,; echo "${names[*]}")
}

syscalls_per_request() {
  grep -v '^#' "$1" | awk -F, -v n="$2" '
    NF > 2 && $1 ~ /^[0-9]+$/ {
      name = $3; sub(/^.*sys_enter_?/, "", name)
      if (name == "") all = $1; else { listed += $1; if ($1 / n >= 0.01) calls[name] = $1 / n }
    }
    END {
      if (n + 0 == 0 || all == "") { printf "no count (the run failed)"; exit }
      printf "all %.2f", all / n
      m = 0; for (c in calls) keys[++m] = c
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
        if (calls[keys[j]] > calls[keys[i]]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
      for (i = 1; i <= m; i++) printf ", %s %.2f", keys[i], calls[keys[i]]
      if ((all - listed) / n >= 0.01) printf ", other %.2f", (all - listed) / n
    }'
}
