/* Area: preload / fork while another thread reads /proc/self/maps.
 * Purpose: caller conditions read /proc/self/maps into a cache, again when a call comes from
 * an object loaded since. A fork while another thread reads it must not leave the child's
 * cache "being read" forever. The program makes its maps long (thousands of mappings, so
 * reading them takes milliseconds) and calls getppid() once (the cache is filled). Then,
 * CHILDREN times (at most 30: the preload re-reads the maps at most 32 times): it dlopens a
 * fresh copy of LIBRARY (libcallerlib, a new object the cache has not seen), a thread calls
 * getppid() from it (which makes the preload read the maps again), and this thread forks at
 * that moment. Each child calls getppid() from this program and exits 0 if that call was
 * advised (a rule makes it return 4242), 1 if not.
 * Usage: fork_maps LIBRARY CHILDREN. Output: "children C unadvised U". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int (*lib_getppid)(void);
static volatile int started;

static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    if (!in || !out) return -1;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    fclose(in);
    return fclose(out);
}

static void *library_caller(void *arg) {
    (void)arg;
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    (void)lib_getppid();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int children = atoi(argv[2]);
    long page = sysconf(_SC_PAGESIZE);
    /* alternating protections keep the kernel from merging neighbours: one line each */
    char *area = mmap(NULL, (size_t)page * 20000, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) return 2;
    for (int i = 0; i < 20000; i += 2) mprotect(area + (size_t)i * page, (size_t)page, PROT_READ | PROT_WRITE);
    (void)getppid();
    int unadvised = 0;
    for (int c = 0; c < children; c++) {
        /* a fresh copy each round, kept loaded: an object at an address the cache has not seen */
        char copy[64];
        snprintf(copy, sizeof copy, "/tmp/fork_maps-%d-%d.so", (int)getpid(), c);
        if (copy_file(argv[1], copy) != 0) return 2;
        void *h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
        unlink(copy);
        if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
        lib_getppid = (int (*)(void))dlsym(h, "caller_lib_getppid");
        started = 0;
        pthread_t t;
        pthread_create(&t, NULL, library_caller, NULL);
        while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE)) {}
        pid_t pid = fork();
        if (pid == 0) _exit(getppid() == 4242 ? 0 : 1);
        int status = 0;
        waitpid(pid, &status, 0);
        unadvised += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        pthread_join(t, NULL);
    }
    printf("children %d unadvised %d\n", children, unadvised);
    return 0;
}
