// What PELT makes of a thread that changes CPU on every cycle: a new thread runs RUN_US, sleeps
// SLEEP_US and, with MODE 1, moves to the other of CPUs 0 and 1 (sched_setaffinity) before the
// next cycle; MODE 0 keeps it on CPU 1. It prints its own se.avg.util_avg and util_est
// (/proc/self/task/TID/sched, CONFIG_SCHED_DEBUG) every 200 ms for 2 s. A thread that stays
// settles within about 200 ms. One that moves every 200-300 us loses what it ran since its last
// period boundary at each move (attach_entity_load_avg() rebuilds the sums from the averages) and
// approaches a lower value with a half-life of about a second; at 500 us a cycle it settles as fast
// as one that stays (docs/validation.md).
// Build: cc -O2 -pthread migrate-util.c -o migrate-util     Run: ./migrate-util MODE RUN_US SLEEP_US
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int mode, run_us, sleep_us;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
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

static long field(const char* text, const char* key) {
    const char* at = strstr(text, key);
    return at ? atol(strchr(at, ':') + 1) : -1;
}

static void show(long long t0) {
    char path[128], text[16384];
    snprintf(path, sizeof path, "/proc/self/task/%ld/sched", (long)syscall(SYS_gettid));
    FILE* f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    printf("%5.0f ms  util_avg %4ld  util_est %4ld  migrations %ld\n", (now_ns() - t0) / 1e6,
           field(text, "se.avg.util_avg"), field(text, "se.avg.util_est"), field(text, "se.nr_migrations"));
}

static void* body(void* arg) {
    (void)arg;
    const long long t0 = now_ns();
    long long next = t0;
    int cpu = 1;
    pin(cpu);
    while (now_ns() - t0 < 2000000000LL) {
        const long long end = now_ns() + run_us * 1000LL;
        while (now_ns() < end) {
        }
        const struct timespec s = {0, sleep_us * 1000L};
        nanosleep(&s, NULL);
        if (mode) {
            cpu ^= 1;
            pin(cpu);
        }
        if (now_ns() >= next) {
            show(t0);
            next += 200000000LL;
        }
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODE RUN_US SLEEP_US\n", argv[0]);
        return 2;
    }
    mode = atoi(argv[1]);
    run_us = atoi(argv[2]);
    sleep_us = atoi(argv[3]);
    pthread_t t;
    pthread_create(&t, NULL, body, NULL);  // a new thread: post_init_entity_util_avg() at its start
    pthread_join(t, NULL);
    return 0;
}
