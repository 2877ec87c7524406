// One-way cache-line transfer between two CPUs (a profile's line_llc and the other line_* costs):
// two threads, pinned to CPU A and CPU B, take turns writing one counter; each waits with an
// acquire load for the other's release store, so every turn moves the line across once.
// Build: cc -O2 -pthread line-latency.c -o line-latency     Run: ./line-latency [A B [ROUND_TRIPS]]
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic long turn __attribute__((aligned(64)));
static long rounds = 2000000;
static int cpu_a = 0, cpu_b = 1;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "line-latency: cannot pin to CPU %d\n", cpu);
        exit(1);
    }
}

static void* partner(void* arg) {
    (void)arg;
    pin(cpu_b);
    for (long i = 0; i < rounds; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc >= 3) cpu_a = atoi(argv[1]), cpu_b = atoi(argv[2]);
    if (argc >= 4) rounds = atol(argv[3]);
    pthread_t t;
    pin(cpu_a);
    pthread_create(&t, NULL, partner, NULL);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < rounds; i++) {
        atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2) {
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    pthread_join(t, NULL);
    const double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
    printf("CPU %d <-> CPU %d: one-way line transfer %.1f ns (round trip %.1f ns)\n", cpu_a, cpu_b, ns / rounds / 2,
           ns / rounds);
    return 0;
}
