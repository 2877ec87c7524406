// The CPU time a pipe read and a pipe write cost when the two ends run on different CPUs, against
// the same on one CPU (a profile's pipe_lines: the difference over line_llc). A writer thread
// writes SIZE-byte messages into a blocking pipe while a reader thread reads them; each thread
// reports its own CPU time per message. Across two busy CPUs neither end sleeps, and every
// operation pulls the pipe's state from the other CPU.
// Build: cc -O2 -pthread pipe-stream.c -o pipe-stream
// Run:   ./pipe-stream WRITER_CPU READER_CPU [MESSAGES [SIZE]]     e.g. ./pipe-stream 0 1; ./pipe-stream 0 0
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static long messages = 1000000;
static int size = 100;
static int writer_cpu, reader_cpu;
static double writer_ns, reader_ns;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "pipe-stream: cannot pin to CPU %d\n", cpu);
        exit(1);
    }
}

static double thread_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void* reader(void* arg) {
    (void)arg;
    pin(reader_cpu);
    char buf[65536];
    const double start = thread_ns();
    for (long got = 0; got < messages * size;) {
        const ssize_t r = read(fds[0], buf, (size_t)size);
        if (r <= 0) {
            perror("pipe-stream: read");
            exit(1);
        }
        got += r;
    }
    reader_ns = thread_ns() - start;
    return NULL;
}

static void* writer(void* arg) {
    (void)arg;
    pin(writer_cpu);
    static char buf[65536];
    const double start = thread_ns();
    for (long i = 0; i < messages; i++) {
        if (write(fds[1], buf, (size_t)size) != size) {
            perror("pipe-stream: write");
            exit(1);
        }
    }
    writer_ns = thread_ns() - start;
    return NULL;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s WRITER_CPU READER_CPU [MESSAGES [SIZE]]\n", argv[0]);
        return 2;
    }
    writer_cpu = atoi(argv[1]);
    reader_cpu = atoi(argv[2]);
    if (argc >= 4) messages = atol(argv[3]);
    if (argc >= 5) size = atoi(argv[4]);
    if (size < 1 || size > 65536 || messages < 1) {
        fprintf(stderr, "pipe-stream: expected MESSAGES >= 1 and 1 <= SIZE <= 65536\n");
        return 2;
    }
    if (pipe(fds) != 0) {
        perror("pipe-stream: pipe");
        return 1;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_t r, w;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);
    const double wall = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
    printf("writer CPU %d, reader CPU %d, %d B: wall %.0f ns/message; CPU time writer %.0f, reader %.0f ns/message\n",
           writer_cpu, reader_cpu, size, wall / messages, writer_ns / messages, reader_ns / messages);
    return 0;
}
