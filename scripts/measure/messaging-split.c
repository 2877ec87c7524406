// perf bench sched messaging -t -p -g 1 with every thread pinned to its role's CPU from the
// moment it is created (senders on A, receivers on B), which perf cannot do: it measures where a
// pinned split run settles when it starts pinned, not after a second of free running as
// messaging-modes.sh's `split` does. Same shape as perf's: FDS receivers each reading their own
// pipe, FDS senders writing DATASIZE bytes to every receiver LOOPS times, all released together.
// Prints the time from the release to the last receiver's end, in seconds.
// Build: cc -O2 -pthread -o /tmp/messaging-split scripts/measure/messaging-split.c
// Usage: /tmp/messaging-split [LOOPS] [A B]        (default 3000, CPUs 0 1)
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { FDS = 20, DATASIZE = 100 };

static int pipes[FDS][2];
static int start_pipe[2];
static long loops;
static pthread_barrier_t ready;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) {
        perror("pthread_setaffinity_np");
        exit(1);
    }
}

static void wait_start(void) {
    char c;
    pthread_barrier_wait(&ready);
    if (read(start_pipe[0], &c, 1) != 1) exit(1);
    if (write(start_pipe[1], &c, 1) != 1) exit(1);  // pass the token on: everyone starts
}

struct arg { int cpu, idx; };

static void *receiver(void *p) {
    const struct arg *a = p;
    char buf[DATASIZE];
    pin(a->cpu);
    wait_start();
    for (long i = 0; i < loops * FDS; i++) {
        size_t got = 0;
        while (got < DATASIZE) {
            ssize_t n = read(pipes[a->idx][0], buf + got, DATASIZE - got);
            if (n <= 0) exit(1);
            got += (size_t)n;
        }
    }
    return NULL;
}

static void *sender(void *p) {
    const struct arg *a = p;
    char buf[DATASIZE] = {0};
    pin(a->cpu);
    wait_start();
    for (long i = 0; i < loops; i++)
        for (int j = 0; j < FDS; j++)
            if (write(pipes[j][1], buf, DATASIZE) != DATASIZE) exit(1);
    return NULL;
}

int main(int argc, char **argv) {
    loops = argc > 1 ? atol(argv[1]) : 3000;
    const int a = argc > 3 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 1;
    pthread_t th[2 * FDS];
    struct arg args[2 * FDS];
    if (pipe(start_pipe)) return 1;
    pthread_barrier_init(&ready, NULL, 2 * FDS + 1);
    for (int i = 0; i < FDS; i++)
        if (pipe(pipes[i])) return 1;
    for (int i = 0; i < 2 * FDS; i++) {
        args[i] = (struct arg){i < FDS ? b : a, i % FDS};
        pthread_create(&th[i], NULL, i < FDS ? receiver : sender, &args[i]);
    }
    pthread_barrier_wait(&ready);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (write(start_pipe[1], "x", 1) != 1) return 1;
    for (int i = 0; i < FDS; i++) pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int i = FDS; i < 2 * FDS; i++) pthread_join(th[i], NULL);
    printf("%.3f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    return 0;
}
