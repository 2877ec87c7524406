// What a working set costs a thread after it moves to another CPU (a profile's refill_*_ns_per_kib):
// the thread touches KIB KiB (one write per cache line) plus a getppid() right after
// sched_setaffinity() has moved it, and again on the same CPU; mode 0 sets the same CPU each
// time (no move), mode 1 alternates between CPU A and CPU B. A 200 us sleep between rounds lets
// the other CPU go idle, as a woken task finds it. Medians over ROUNDS.
// Build: cc -O2 migrate-refill.c -o migrate-refill     Run: ./migrate-refill KIB [ROUNDS [MODE [A B]]]
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static volatile char* buf;
static size_t bytes;

static long long touch(void) {
    const long long t0 = now_ns();
    for (size_t i = 0; i < bytes; i += 64) buf[i]++;
    syscall(SYS_getppid);
    return now_ns() - t0;
}

static int by_value(const void* a, const void* b) {
    const long long x = *(const long long*)a, y = *(const long long*)b;
    return (x > y) - (x < y);
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
        exit(1);
    }
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s KIB [ROUNDS [MODE [A B]]]\n", argv[0]);
        return 2;
    }
    bytes = (size_t)atol(argv[1]) * 1024;
    const int rounds = argc > 2 ? atoi(argv[2]) : 2000;
    const int move = argc > 3 ? atoi(argv[3]) : 1;
    const int a = argc > 5 ? atoi(argv[4]) : 0, b = argc > 5 ? atoi(argv[5]) : 1;
    buf = malloc(bytes);
    memset((char*)buf, 1, bytes);
    long long* first = calloc(rounds, sizeof *first);
    long long* again = calloc(rounds, sizeof *again);
    for (int i = 0; i < rounds; ++i) {
        pin(move && (i & 1) ? b : a);
        first[i] = touch();
        again[i] = touch();
        usleep(200);
    }
    qsort(first, rounds, sizeof *first, by_value);
    qsort(again, rounds, sizeof *again, by_value);
    printf("%zu KiB, %s: first touch %.2f us (quartiles %.2f-%.2f), again %.2f us\n", bytes / 1024,
           move ? "moved each round" : "same CPU", first[rounds / 2] / 1e3, first[rounds / 4] / 1e3,
           first[3 * rounds / 4] / 1e3, again[rounds / 2] / 1e3);
    return 0;
}
