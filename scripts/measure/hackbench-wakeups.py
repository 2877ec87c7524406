#!/usr/bin/env python3
"""Where hackbench's wakeups land and what they do, from a kernel trace or a wakesim trace.

Input: the text of `perf script -F cpu,time,event,trace` for a run recorded with
    perf record -a -e sched:sched_switch -e sched:sched_waking -e sched:sched_wakeup -o perf.data -- \\
        perf bench sched messaging -t -p -g 1 -l 1000
or the ftrace text `wakesim run S.json --trace FILE` writes for a messaging scenario. The same
numbers come out of both, so the model can be compared with the kernel event by event:

- who wakes whom (sender -> receiver, receiver -> sender, ...);
- each receiver wakeup by where it lands (on the waker's CPU or another) and what runs on the
  target CPU then (a sender, a receiver, nothing), and how often that task is switched out
  (state R) within --window microseconds (a remote preemption waits for the reschedule IPI);
- CPU time of receivers and senders on each CPU, and switch-ins on a CPU other than the last.

perf bench's threads are all called sched-messaging: in pid order the last 2 x groups x fds are
the workers, per group its receivers and then its senders (sched-messaging.c creates them in that
order); give --groups and --fds as the run had them. wakesim names them receiver-G-I and sender-G-I.
"""
import argparse
import collections
import re
import sys

EVENT = re.compile(r'\[(\d+)\].*?\s([\d.]+): (?:sched:)?(\w+): (.*)')
FIELD = re.compile(r'(\w+)=(\S+)')


def read(path):
    ev = []
    with open(path) as f:
        for line in f:
            m = EVENT.search(line)
            if m and m.group(3) in ('sched_switch', 'sched_waking', 'sched_wakeup'):
                ev.append((float(m.group(2)), int(m.group(1)), m.group(3), dict(FIELD.findall(m.group(4)))))
    ev.sort(key=lambda e: e[0])
    return ev


def classes(ev, groups, fds):
    perf = sorted({int(kv['next_pid']) for _, _, n, kv in ev
                   if n == 'sched_switch' and kv.get('next_comm') == 'sched-messaging'})
    if perf:
        workers = perf[-2 * groups * fds:]  # the perf process and its main thread come first
        rcv, snd = set(), set()
        for g in range(groups):
            rcv |= set(workers[2 * g * fds:(2 * g + 1) * fds])
            snd |= set(workers[(2 * g + 1) * fds:(2 * g + 2) * fds])
        return rcv, snd
    named = {int(kv['next_pid']): kv.get('next_comm', '') for _, _, n, kv in ev if n == 'sched_switch'}
    return ({p for p, c in named.items() if c.startswith('receiver')},
            {p for p, c in named.items() if c.startswith('sender')})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('trace')
    ap.add_argument('--groups', type=int, default=1)
    ap.add_argument('--fds', type=int, default=20)
    ap.add_argument('--window', type=float, default=30.0, help='microseconds (default 30)')
    a = ap.parse_args()
    ev = read(a.trace)
    rcv, snd = classes(ev, a.groups, a.fds)
    if not rcv or not snd:
        sys.exit(f'{a.trace}: no hackbench threads found')
    cls = lambda p: 'receiver' if p in rcv else 'sender' if p in snd else 'idle' if p == 0 else 'other'
    win = a.window * 1e-6

    curr, waker_cpu, pending = {}, {}, []
    who = collections.Counter()
    landed, preempted = collections.Counter(), collections.Counter()
    cpu_time = collections.Counter()
    last_cpu, moves, started = {}, 0, {}
    for t, cpu, name, kv in ev:
        if name == 'sched_switch':
            prev, nxt = int(kv['prev_pid']), int(kv['next_pid'])
            still = []
            for wt, tc, kind, running in pending:
                if t - wt > win:
                    continue
                if tc == cpu:
                    if prev == running and kv['prev_state'].startswith('R'):
                        preempted[kind] += 1
                    continue  # the target switched: this wakeup is settled
                still.append((wt, tc, kind, running))
            pending = still
            if prev in started:
                cpu_time[(cls(prev), cpu)] += t - started.pop(prev)
            if nxt in rcv or nxt in snd:
                started[nxt] = t
                if nxt in last_cpu and last_cpu[nxt] != cpu:
                    moves += 1
                last_cpu[nxt] = cpu
            curr[cpu] = nxt
        elif name == 'sched_waking':
            p = int(kv['pid'])
            waker_cpu[p] = cpu
            who[(cls(curr.get(cpu, -1)), cls(p))] += 1
        else:
            p = int(kv['pid'])
            if p not in rcv:
                continue
            tc = int(kv['target_cpu'])
            running = curr.get(tc, 0)
            kind = ('local' if waker_cpu.get(p) == tc else 'remote', cls(running))
            landed[kind] += 1
            pending.append((t, tc, kind, running))

    print('wakeups, waker -> wakee:')
    for k, v in who.most_common():
        print(f'  {k[0]:>8} -> {k[1]:<8} {v}')
    total = sum(landed.values())
    print(f'receiver wakeups: {total}; by target, with the task running there switched out within {a.window:g} us:')
    for k in sorted(landed):
        print(f'  {k[0]:>6} onto {k[1]:<8} {landed[k]:7d} ({100 * landed[k] / total:4.1f}%)  switched out: '
              f'{preempted[k]} ({100 * preempted[k] / landed[k]:.0f}%)')
    cpus = sorted({c for _, c in cpu_time})
    for c in ('receiver', 'sender'):
        print(f'{c}s: CPU time ' + ', '.join(f'cpu{k} {cpu_time[(c, k)] * 1e3:.1f} ms' for k in cpus))
    print(f'switch-ins on a CPU other than the last one: {moves}')


if __name__ == '__main__':
    main()
