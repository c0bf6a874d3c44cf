/* Area: catalog / flag sets.
 * Purpose: prints the values of the flag names the catalog's [flagsets] define, from the C
 * headers, so a test can check the catalog's numbers. Output: "NAME VALUE" per line. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>

#define P(x) printf("%s %lu\n", #x, (unsigned long)(x));

int main(void) {
    P(O_RDONLY) P(O_WRONLY) P(O_RDWR) P(O_ACCMODE) P(O_CREAT) P(O_EXCL) P(O_NOCTTY) P(O_TRUNC)
    P(O_APPEND) P(O_NONBLOCK) P(O_DSYNC) P(O_ASYNC) P(O_DIRECT) P(O_LARGEFILE) P(O_DIRECTORY)
    P(O_NOFOLLOW) P(O_NOATIME) P(O_CLOEXEC) P(O_SYNC) P(O_PATH) P(O_TMPFILE)
    P(MSG_OOB) P(MSG_PEEK) P(MSG_DONTROUTE) P(MSG_CTRUNC) P(MSG_TRUNC) P(MSG_DONTWAIT) P(MSG_EOR)
    P(MSG_WAITALL) P(MSG_NOSIGNAL) P(MSG_MORE) P(MSG_CMSG_CLOEXEC)
    P(AF_UNSPEC) P(AF_UNIX) P(AF_LOCAL) P(AF_INET) P(AF_INET6) P(AF_NETLINK) P(AF_PACKET)
    P(SOCK_STREAM) P(SOCK_DGRAM) P(SOCK_RAW) P(SOCK_SEQPACKET) P(SOCK_NONBLOCK) P(SOCK_CLOEXEC)
    return 0;
}
