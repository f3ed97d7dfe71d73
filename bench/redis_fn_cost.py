#!/usr/bin/env python3
"""Redis time per decision, measured inside Redis with nothing else competing for its core:
the room functions `join` (a newcomer) and `status` (a queued visitor) called straight by
`redis-benchmark` (no HTTP, no Anteroom on the hot path), Redis pinned to CPU 0 and the
benchmark client and Anteroom to CPU 1. Each argument is a folder holding an `anteroom`
and an `anteroom-loadtest` binary (e.g. copies of target/release from two commits):

    python3 bench/redis_fn_cost.py /tmp/before /tmp/after --rounds 3

For each build: a fresh Redis and one Anteroom instance (it declares the `bench` room,
capacity 1,000, and loads its function library); 500,000 joins over 50,000 visitor ids
(so all of them hold a place, 1,000 of them a session); then `--n` statuses of those ids
(98 % queued), then `--n` joins of new ids (each a newcomer, queued behind ~50,000).
`INFO commandstats` is reset before each measured phase; a figure is the scripts' usec per
call (`harness.redis_cost`: FCALL, and the instance's few background scripts of the same
seconds), which includes the commands they run (their count per call beside it), and the status's
`ZADD`s per call (its heartbeat writes: at most one per visitor per heartbeat step).
The join+status benchmark makes one of each per visitor, so their mean is its "Redis µs
per decision" without the preemption a loaded 2-core machine adds.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import COMMANDS, Stack, redis_cost, resp  # noqa: E402

KEYS10 = ["cfg", "q", "hb", "act", "sess", "st", "win", "units", "events", "jt"]


# Pinning needs two CPUs and taskset (util-linux); without either, nothing is pinned.
PIN = (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None


def pin(cpu, pid):
    """Pins every thread of `pid` to `cpu` (best effort: see PIN)."""
    if PIN:
        subprocess.run(["taskset", "-apc", str(cpu), str(pid)], capture_output=True)


def bench(port, lib, keys, fn, args, n, r):
    resp(port, "CONFIG", "RESETSTAT")
    cmd = ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", "20", "-r", str(r), "-q",
           "FCALL", f"{lib}_{fn}", str(len(keys)), *keys, *args]
    if PIN:
        cmd = ["taskset", "-c", "1"] + cmd
    COMMANDS.append(" ".join(cmd))
    subprocess.run(cmd, capture_output=True, check=True)
    cost = redis_cost(port, n)
    # Writes to the heartbeat (and the line) per call: ZADD is the only ZSET write a
    # status or a newcomer's join makes.
    zadds = harness.commandstats(port).get("zadd", (0, 0))[0] / n
    return cost["usec_per_script"], cost["calls_per_script"], zadds


def one(bin_dir, n):
    tmp = tempfile.mkdtemp(prefix="anteroom-fncost-")
    try:
        s = Stack(bin_dir, tmp, capacity=1000)
        port = s.redis_port
        pin(0, s.redis_pid)
        pin(1, s.pids[0])
        lib = resp(port, "FUNCTION", "LIST")[0][1]
        code = resp(port, "FUNCTION", "LIST", "WITHCODE")[0][-1]
        prefix = "bench:room:{bench}:"
        # This build's functions take one key (bind derives the rest) or all ten.
        one_key = "string.sub(keys[1], 1, -4)" in code
        keys = [prefix + "cfg"] if one_key else [prefix + k for k in KEYS10]
        join = ["v:__rand_int__", "", "0", "", "", ""]
        bench(port, lib, keys, "join", join, 500_000, 50_000)
        queued = int(resp(port, "ZCARD", prefix + "q"))
        status = bench(port, lib, keys, "status", ["v:__rand_int__"], n, 50_000)
        newcomer = bench(port, lib, keys, "join", ["w:__rand_int__"] + join[1:], n, 10**11)
        s.close()
    finally:
        harness.stop_all()
    return queued, status, newcomer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=200_000)
    a = ap.parse_args()
    print("| build | queued | status µs (calls) | status ZADDs per call | join µs (calls) | µs per decision (mean) |")
    print("|---|---|---|---|---|---|")
    for _ in range(a.rounds):
        for b in a.builds:
            q, (su, sc, sz), (ju, jc, _) = one(b, a.n)
            name = os.path.basename(b.rstrip("/"))
            print(f"| {name} | {q:,} | {su:.2f} ({sc:.1f}) | {sz:.2f} | {ju:.2f} ({jc:.1f}) | {(su + ju) / 2:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
