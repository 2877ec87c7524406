// Does a wakeup's IPI reach an idle vCPU before the waker's write() returns? A writer on CPU A
// spins GAP us, then writes one byte to a pipe; a reader blocked in read() on CPU B (idle
// between writes) takes the time as soon as read() returns and acknowledges through a second
// pipe. Prints the write()'s p50 and p90, the reader's running time after the write began, and
// how often the reader ran before the write() returned (an IPI sent while the sender's VM exit
// is still in progress would show here).
// Build: cc -O2 -pthread -o /tmp/ipi-overlap scripts/measure/ipi-overlap.c
// Usage: /tmp/ipi-overlap [GAP_US]   (default 20; CPUs 0 and 1)
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { N = 20000 };
static int data_pipe[2], ack_pipe[2];
static double start[N], returned[N], woke[N];

static double usec(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) { perror("sched_setaffinity"); exit(1); }
}

static void *reader(void *arg) {
    (void)arg;
    pin(1);
    char c;
    for (int i = 0; i < N; i++) {
        if (read(data_pipe[0], &c, 1) != 1) exit(1);
        woke[i] = usec();
        if (write(ack_pipe[1], &c, 1) != 1) exit(1);
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const int gap = argc > 1 ? atoi(argv[1]) : 20;
    if (pipe(data_pipe) != 0 || pipe(ack_pipe) != 0) { perror("pipe"); return 1; }
    pin(0);
    pthread_t th;
    pthread_create(&th, NULL, reader, NULL);
    usleep(10000);
    char c = 'x';
    for (int i = 0; i < N; i++) {
        const double s = usec();
        while (usec() - s < gap) {}
        start[i] = usec();
        if (write(data_pipe[1], &c, 1) != 1) return 1;
        returned[i] = usec();
        if (read(ack_pipe[0], &c, 1) != 1) return 1;
    }
    pthread_join(th, NULL);
    static double w[N], r[N];
    int before = 0;
    for (int i = 0; i < N; i++) {
        w[i] = returned[i] - start[i];
        r[i] = woke[i] - start[i];
        if (woke[i] < returned[i]) before++;
    }
    qsort(w, N, sizeof w[0], by_value);
    qsort(r, N, sizeof r[0], by_value);
    printf("gap %4d us: write() p50 %.2f us p90 %.2f; reader running after the write began p50 %.2f p90 %.2f; "
           "reader ran before write() returned: %.1f%%\n",
           gap, w[N / 2], w[N * 9 / 10], r[N / 2], r[N * 9 / 10], 100.0 * before / N);
    return 0;
}
