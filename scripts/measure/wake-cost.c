// What a wakeup costs the waker, untraced: the CPU time of a 1-byte pipe write() that wakes a
// reader blocked in read(), by where the reader is and what its CPU is doing. The writer spins
// GAP us between writes (no syscalls), so each write finds the reader asleep again.
//   nobody      nobody waits on the pipe: the write alone
//   local       the reader on the writer's CPU, SCHED_BATCH (woken, it does not preempt); the
//               writer yields after each write instead of spinning, so the reader runs
//   remote-busy the reader on CPU B, SCHED_BATCH, next to a loop that spins 3 us between
//               sched_yield() calls: B is busy, so the waker enqueues the reader there itself
//               and sends nothing; the loop's next yield lets the reader run
//   remote-ipi  a SCHED_NORMAL reader on B next to a busy loop, which it preempts: the waker
//               sends the reschedule IPI (smp_send_reschedule)
//   idle-GAP    the reader alone on CPU B, idle between writes: the wake-list IPI to an idle
//               CPU, unless its idle task still polls (sched_wake_idle_without_ipi)
// Prints per case the write's CPU time (CLOCK_THREAD_CPUTIME_ID, which itself costs a little:
// compare with `nobody`), p50 and mean, the reader's sleeps per write (its voluntary switches:
// how many writes woke it), the mean extra cost per wakeup over `nobody`, and the reader's CPU
// time per wakeup.
// Build: cc -O2 -pthread -o /tmp/wake-cost scripts/measure/wake-cost.c
// Usage: /tmp/wake-cost [A B [GAP]]    (CPUs, default 0 1; with GAP (us) only the idle case
//                                       at that gap, e.g. under bpf/wake-latency.bt)
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

static double usec(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s)) {
        perror("pthread_setaffinity_np");
        exit(1);
    }
}

static void set_batch(void) {
    struct sched_param sp = {0};
    if (sched_setscheduler(0, SCHED_BATCH, &sp)) {
        perror("sched_setscheduler");
        exit(1);
    }
}

struct reader { int fd, cpu, batch; long n; long sleeps; double cpu_us; };
static volatile int stop_spin;
static int spin_yields;
static double nobody_mean;

static void *read_loop(void *p) {
    const struct reader *r = p;
    char c;
    pin(r->cpu);
    if (r->batch) set_batch();
    struct rusage u0, u1;
    const double c0 = usec(CLOCK_THREAD_CPUTIME_ID);
    getrusage(RUSAGE_THREAD, &u0);
    for (long i = 0; i < r->n; i++)
        if (read(r->fd, &c, 1) != 1) exit(1);
    getrusage(RUSAGE_THREAD, &u1);
    ((struct reader *)p)->sleeps = u1.ru_nvcsw - u0.ru_nvcsw;
    ((struct reader *)p)->cpu_us = usec(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

static void *spin_loop(void *p) {
    pin(*(const int *)p);
    while (!stop_spin) {
        if (!spin_yields) continue;
        const double until = usec(CLOCK_MONOTONIC) + spin_yields;
        while (usec(CLOCK_MONOTONIC) < until) {
        }
        sched_yield();
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// n writes GAP us apart from CPU a (yield: sched_yield() instead of the gap); reader on rcpu
// (-1: none), a loop on spin_cpu (-1: none) that spins or yields.
static void measure(const char *name, int a, int rcpu, int batch, int spin_cpu, int yields, double gap, long n) {
    int p[2];
    if (pipe(p)) exit(1);
    pthread_t rt, st;
    struct reader r = {p[0], rcpu, batch, n, 0, 0};
    stop_spin = 0;
    spin_yields = yields;
    if (spin_cpu >= 0) pthread_create(&st, NULL, spin_loop, &spin_cpu);
    if (rcpu >= 0) pthread_create(&rt, NULL, read_loop, &r);
    pin(a);
    usleep(20000);
    double *cpu = malloc((size_t)n * sizeof *cpu), sum = 0;
    for (long i = 0; i < n; i++) {
        const double c0 = usec(CLOCK_THREAD_CPUTIME_ID);
        if (write(p[1], "x", 1) != 1) exit(1);
        cpu[i] = usec(CLOCK_THREAD_CPUTIME_ID) - c0;
        sum += cpu[i];
        if (gap <= 0) {
            sched_yield();
            continue;
        }
        const double until = usec(CLOCK_MONOTONIC) + gap;
        while (usec(CLOCK_MONOTONIC) < until) {
        }
    }
    if (rcpu >= 0) pthread_join(rt, NULL);
    stop_spin = 1;
    if (spin_cpu >= 0) pthread_join(st, NULL);
    qsort(cpu, (size_t)n, sizeof *cpu, cmp);
    const double mean = sum / (double)n, woke = rcpu >= 0 ? (double)r.sleeps / (double)n : 0;
    if (rcpu < 0) nobody_mean = mean;
    printf("%-12s gap %5.0f us  write CPU p50 %6.2f us  mean %6.2f us  wakeups/write %.3f", name, gap, cpu[n / 2], mean, woke);
    if (woke > 0.05 && nobody_mean > 0) printf("  per wakeup %+.2f us", (mean - nobody_mean) / woke);
    if (woke > 0.05) printf("  reader CPU %.2f us per wakeup", r.cpu_us / (double)r.sleeps);
    printf("\n");
    free(cpu);
    close(p[0]);
    close(p[1]);
}

int main(int argc, char **argv) {
    const int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    if (argc > 3) {
        measure("idle", a, b, 0, -1, 0, atof(argv[3]), 10000);
        return 0;
    }
    measure("nobody", a, -1, 0, -1, 0, 1, 20000);
    measure("local", a, a, 1, -1, 0, 0, 10000);
    measure("remote-busy", a, b, 1, b, 3, 20, 10000);
    measure("remote-ipi", a, b, 0, b, 0, 50, 10000);
    const double gaps[] = {5, 10, 20, 50, 1000};
    for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "idle-%.0f", gaps[i]);
        measure(name, a, b, 0, -1, 0, gaps[i], gaps[i] >= 1000 ? 2000 : 10000);
    }
    return 0;
}
