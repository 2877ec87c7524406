// One sender and one receiver thread on a pipe, started the way perf bench sched messaging
// starts its workers (each writes a byte to a ready pipe and polls a wake pipe; the main thread
// reads both and writes the wake pipe once): the kernel's side of the model's `messaging` with
// groups 1, fds 1. The sender writes LOOPS messages of SIZE bytes; the receiver reads them.
// Count what the scheduler did with, e.g.:
//   taskset -c 0 perf stat -e sched:sched_wakeup,context-switches /tmp/messaging-pair 20000 100
// and see the start (the sender preempted at each write until the ping-pong breaks) with
//   taskset -c 0 perf record -e sched:sched_switch,sched:sched_wakeup /tmp/messaging-pair
// Build: cc -O2 -pthread -o /tmp/messaging-pair scripts/measure/messaging-pair.c
// Usage: /tmp/messaging-pair [LOOPS [SIZE]]        (default 20000 100)
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int data[2], ready_pipe[2], wake_pipe[2];
static long loops = 20000;
static int size = 100;

static void ready(void) {
    char c = 0;
    if (write(ready_pipe[1], &c, 1) != 1) exit(1);
    struct pollfd p = {.fd = wake_pipe[0], .events = POLLIN};
    poll(&p, 1, -1);
}

static void* receiver(void* arg) {
    (void)arg;
    char buf[65536];
    ready();
    for (long i = 0; i < loops; i++)
        for (int done = 0; done < size;) {
            const ssize_t r = read(data[0], buf + done, (size_t)(size - done));
            if (r <= 0) exit(1);
            done += (int)r;
        }
    return NULL;
}

static void* sender(void* arg) {
    (void)arg;
    static char buf[65536];
    ready();
    for (long i = 0; i < loops; i++)
        for (int done = 0; done < size;) {
            const ssize_t r = write(data[1], buf + done, (size_t)(size - done));
            if (r <= 0) exit(1);
            done += (int)r;
        }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1) loops = atol(argv[1]);
    if (argc > 2) size = atoi(argv[2]);
    if (loops <= 0 || size <= 0 || size > 65536) {
        fprintf(stderr, "usage: %s [LOOPS [SIZE <= 65536]]\n", argv[0]);
        return 2;
    }
    if (pipe(data) || pipe(ready_pipe) || pipe(wake_pipe)) return 1;
    pthread_t r, s;
    pthread_create(&r, NULL, receiver, NULL);  // receivers first, as perf creates them
    pthread_create(&s, NULL, sender, NULL);
    char c = 0;
    for (int i = 0; i < 2; i++)
        if (read(ready_pipe[0], &c, 1) != 1) return 1;
    if (write(wake_pipe[1], &c, 1) != 1) return 1;
    pthread_join(r, NULL);
    pthread_join(s, NULL);
    return 0;
}
