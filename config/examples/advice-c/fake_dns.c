/* fake_dns — getaddrinfo answers 127.0.0.1 for example.invalid; every other name goes to the
 * real resolver. An `instead` advice: the rule (fake-dns.json) hands it every call, and it
 * either answers itself or proceeds to the original, as an Aspects block calls
 * [info.originalInvocation invoke].
 *
 *   cc -shared -fPIC -O2 -I ../../../Sources/CPreload/include -o libfake_dns.so fake_dns.c
 *   (installed: -I PREFIX/include/aspects)
 *   aspectctl run --rules fake-dns.json -- curl http://example.invalid:8080/
 *
 * The answer is one block holding the addrinfo and its address, as glibc allocates its own
 * (freeaddrinfo frees ai and ai_canonname, not ai_addr); malloc here is the C library's: calls
 * an advice makes are not advised. */
#include <aspects_advice.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int port_of(const char *service, const struct addrinfo *hints) {
    if (!service) return 0;
    char *end;
    long n = strtol(service, &end, 10);
    if (*service && !*end) return n >= 0 && n <= 65535 ? (int)n : -1;
    if (hints && (hints->ai_flags & AI_NUMERICSERV)) return -1;
    const struct servent *s = getservbyname(service, hints && hints->ai_socktype == SOCK_DGRAM ? "udp" : "tcp");
    return s ? ntohs((uint16_t)s->s_port) : -1;
}

void fake_dns(aspects_invocation *inv) {
    const char *node = aspects_arg_ptr(inv, 0);
    if (!node || strcmp(node, "example.invalid") != 0) {
        aspects_proceed(inv);   /* the real getaddrinfo, its result and errno the caller's */
        return;
    }
    const char *service = aspects_arg_ptr(inv, 1);
    const struct addrinfo *hints = aspects_arg_ptr(inv, 2);
    struct addrinfo **res = aspects_arg_ptr(inv, 3);
    const int port = port_of(service, hints);
    if (port < 0) {
        aspects_set_return_int(inv, EAI_SERVICE);
        return;
    }
    if (hints && hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET) {
        aspects_set_return_int(inv, EAI_NONAME);   /* an IPv4 answer only: no IPv6 address */
        return;
    }
    struct {
        struct addrinfo ai;
        struct sockaddr_in sin;
    } *block = calloc(1, sizeof *block);
    if (!block) {
        aspects_set_return_int(inv, EAI_MEMORY);
        return;
    }
    block->sin.sin_family = AF_INET;
    block->sin.sin_port = htons((uint16_t)port);
    block->sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    block->ai.ai_family = AF_INET;
    block->ai.ai_socktype = hints && hints->ai_socktype ? hints->ai_socktype : SOCK_STREAM;
    block->ai.ai_protocol = block->ai.ai_socktype == SOCK_DGRAM ? IPPROTO_UDP : IPPROTO_TCP;
    block->ai.ai_addrlen = sizeof block->sin;
    block->ai.ai_addr = (struct sockaddr *)&block->sin;
    if (hints && (hints->ai_flags & AI_CANONNAME)) block->ai.ai_canonname = strdup(node);
    *res = &block->ai;
    aspects_set_return_int(inv, 0);
}
