// How long a task group keeps weight on one CPU after its task on another CPU went to sleep
// (calc_group_shares() reads the group's load averages, which decay). Three tasks in two
// sessions, so two autogroups (kernel.sched_autogroup_enabled=1): session A runs a busy loop on
// CPU 0; session G runs a busy loop on CPU 0 and a task on CPU 1 that spins for SPIN_MS and then
// sleeps. Prints, per WINDOW_MS window from the common start, A's share of the CPU 0 time A and
// G's loop got (from /proc/PID/schedstat).
// Build: cc -O2 -o group-decay scripts/measure/group-decay.c
// Usage: group-decay [SPIN_MS=100] [TOTAL_MS=300] [WINDOW_MS=10]
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s)) { perror("sched_setaffinity"); exit(1); }
}

static long long runtime_ns(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE* f = fopen(path, "r");
    long long t = 0;
    if (!f || fscanf(f, "%lld", &t) != 1) { perror(path); exit(1); }
    fclose(f);
    return t;
}

// Waits for the start byte, then spins (forever, or for spin_ms and then sleeps).
static void task(int go_fd, int cpu, long spin_ms) {
    pin(cpu);
    char c;
    if (read(go_fd, &c, 1) != 1) exit(1);
    const long long end = spin_ms > 0 ? now_ns() + spin_ms * 1000000LL : 0;
    for (volatile unsigned long i = 0;; ++i)
        if (end && (i & 1023) == 0 && now_ns() >= end) break;
    for (;;) pause();
}

int main(int argc, char** argv) {
    const long spin_ms = argc > 1 ? atol(argv[1]) : 100, total_ms = argc > 2 ? atol(argv[2]) : 300,
               window_ms = argc > 3 ? atol(argv[3]) : 10;
    int go[2];
    if (pipe(go)) return 1;
    pid_t a = fork();
    if (a == 0) { setsid(); task(go[0], 0, 0); }
    int to_main[2];
    if (pipe(to_main)) return 1;
    pid_t g = fork();
    if (g == 0) {
        setsid();
        pid_t g0 = fork();
        if (g0 == 0) task(go[0], 0, 0);
        pid_t g1 = fork();
        if (g1 == 0) task(go[0], 1, spin_ms);
        if (write(to_main[1], &g0, sizeof g0) != sizeof g0 || write(to_main[1], &g1, sizeof g1) != sizeof g1) return 1;
        for (;;) pause();
    }
    pid_t g0, g1;
    if (read(to_main[0], &g0, sizeof g0) != sizeof g0 || read(to_main[0], &g1, sizeof g1) != sizeof g1) return 1;
    pin(1);
    usleep(100000);  // all three forked and waiting
    if (write(go[1], "xxx", 3) != 3) return 1;
    const long long t0 = now_ns();
    long long ra = runtime_ns(a), rg = runtime_ns(g0);
    for (long w = 1; w * window_ms <= total_ms; ++w) {
        const long long until = t0 + w * window_ms * 1000000LL;
        while (now_ns() < until) usleep(200);
        const long long na = runtime_ns(a), ng = runtime_ns(g0);
        printf("%ld %.3f\n", w * window_ms, (double)(na - ra) / (double)((na - ra) + (ng - rg)));
        ra = na;
        rg = ng;
    }
    kill(a, SIGKILL);
    kill(g0, SIGKILL);
    kill(g1, SIGKILL);
    kill(g, SIGKILL);
    while (wait(NULL) > 0) {}
    return 0;
}
