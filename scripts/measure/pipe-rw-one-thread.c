// Measures what a non-blocking 100-byte pipe write and read cost, without any context switch:
// one thread fills a pipe with 600 writes and drains it with 600 reads, 3,000 times, and prints
// its own CPU time per operation.
// Build: cc -O2 scripts/measure/pipe-rw-one-thread.c -o pipe-rw; run: taskset -c 0 ./pipe-rw
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void) {
    int p[2];
    if (pipe(p)) return 1;
    char buf[100] = {0};
    double write_ns = 0, read_ns = 0;
    long n = 0;
    for (int round = 0; round < 3000; round++) {
        const double a = cpu_ns();
        for (int i = 0; i < 600; i++)  // 600 x 100 B stays below the pipe's 64 KiB
            if (write(p[1], buf, sizeof buf) != sizeof buf) return 2;
        const double m = cpu_ns();
        for (int i = 0; i < 600; i++)
            if (read(p[0], buf, sizeof buf) != sizeof buf) return 3;
        const double e = cpu_ns();
        write_ns += m - a;
        read_ns += e - m;
        n += 600;
    }
    printf("write %.1f ns, read %.1f ns per 100 B op (%ld each)\n", write_ns / n, read_ns / n, n);
    return 0;
}
