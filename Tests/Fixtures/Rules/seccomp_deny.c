/* Area: calling contexts under a container's seccomp profile (CallContextTests).
 * Purpose: runs a program as Docker's default profile runs it in a container without
 * CAP_SYS_PTRACE: process_vm_readv refused with EPERM, every other system call allowed. The
 * filter is inherited across exec, so the preload of the program runs under it.
 * Usage: seccomp_deny PROGRAM ARGS... — exits 3 (and says why) if the filter cannot be
 * installed or does not refuse the call. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp_deny: install the filter");
        return 3;
    }
    char word = 0, copy = 0;
    struct iovec local = {&copy, 1}, remote = {&word, 1};
    if (syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L) != -1 || errno != EPERM) {
        fprintf(stderr, "seccomp_deny: process_vm_readv was not refused\n");
        return 3;
    }
    execv(argv[1], argv + 1);
    perror("seccomp_deny: exec");
    return 3;
}
