"""CPU per join, queued and admitted (`python3 bench/run.py --only joincost`, issue 35 item
2): Redis's whole-process CPU (`INFO cpu`, user + system, from `CONFIG RESETSTAT` to the
end of the load) and Anteroom's (/proc, the instance process) divided by the joins wrk
completed. One instance (`workers = 1`, defaults on but the request limits and the
per-address cap, which one client address would trip) on its own Redis, a fresh pair per
run; `wrk -t2 -c64` of `POST /api/rooms/bench/join` only, each a new visitor
(`bench/peers/request.lua`). Queued: capacity 1, its slot held by a first join, so every
join queues. Admitted: capacity 10,000,000, so every join is let in (a sale's first
seconds). Rounds alternate the two (the order turns each round); medians. Beside them, the
same Redis CPU measure for `redis-benchmark` calling `EVALSHA` of `return 1` (50 clients,
300,000 calls): what one trivial script costs Redis on this machine in the same run.
"""

import os
import re
import statistics
import subprocess
import time
import urllib.request

from harness import (COMMANDS, Stack, redis_cost, redis_cpu_s, reset_stats, resp, start_redis)
from peers_bench import _ticks, _wrk


def _trivial_script_cpu(lt, n=300000):
    r = start_redis(lt)
    port = r.ports[0]
    sha = resp(port, "SCRIPT", "LOAD", "return 1")
    cpu0 = redis_cpu_s(port)
    cmd = ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", "50", "-q", "EVALSHA", sha, "0"]
    COMMANDS.append(" ".join(cmd))
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    cpu = redis_cpu_s(port) - cpu0
    r.close()
    m = re.findall(r"([\d.]+) requests per second", out)
    return {"usec_per_call": cpu * 1e6 / n, "calls_per_s": float(m[-1]) if m else 0.0}


def _one(bin_dir, tmp, mode, dur, r):
    capacity = 1 if mode == "queued" else 10_000_000
    s = Stack(bin_dir, tmp, capacity=capacity)
    try:
        if mode == "queued":  # the one slot, held
            urllib.request.urlopen(urllib.request.Request(
                s.url() + "/api/rooms/bench/join", data=b"", method="POST"), timeout=10).read()
        reset_stats(s.redis_port)
        hz = os.sysconf("SC_CLK_TCK")
        a0 = _ticks(s.pids[0])
        x = _wrk(s.url(), "anteroom", "join", dur, run=f"{mode}{r}", pids=(s.pids[0], s.redis_pid))
        anteroom_s = (_ticks(s.pids[0]) - a0) / hz
        cost = redis_cost(s.redis_port, x["requests"])
        return {"mode": mode, "round": r + 1, "joins": x["requests"],
                "joins_per_s": x["requests_per_s"], "p99_ms": x["p99_us"] / 1000,
                "errors": sum(x["errors"].values()),
                "redis_cpu_us": cost["cpu_usec_per_decision"],
                "redis_script_us": cost["usec_per_decision"],
                "anteroom_cpu_us": anteroom_s * 1e6 / max(x["requests"], 1),
                "anteroom_cpu_pct": x["cpu_pct"][0], "redis_cpu_pct": x["cpu_pct"][1]}
    finally:
        s.close()


def join_cost(bin_dir, lt, tmp, dur, rounds):
    runs = []
    trivial = []
    for r in range(rounds):
        trivial.append(_trivial_script_cpu(lt))
        for mode in (("queued", "admitted") if r % 2 == 0 else ("admitted", "queued")):
            x = _one(bin_dir, tmp, mode, dur, r)
            runs.append(x)
            print(f"round {r + 1} {mode}: {x['joins_per_s']:,.0f} joins/s, Redis {x['redis_cpu_us']:.1f} µs, "
                  f"Anteroom {x['anteroom_cpu_us']:.1f} µs per join", flush=True)
            time.sleep(1)

    def med(mode, k):
        xs = [x[k] for x in runs if x["mode"] == mode]
        return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}

    medians = {mode: {k: med(mode, k) for k in ("joins_per_s", "p99_ms", "redis_cpu_us",
                                                 "redis_script_us", "anteroom_cpu_us",
                                                 "anteroom_cpu_pct", "redis_cpu_pct")}
               for mode in ("queued", "admitted")}
    return {"rounds": rounds, "duration_s": dur, "runs": runs, "medians": medians,
            "trivial_script_us": {
                "median": statistics.median(t["usec_per_call"] for t in trivial),
                "min": min(t["usec_per_call"] for t in trivial),
                "max": max(t["usec_per_call"] for t in trivial)},
            "errors": sum(x["errors"] for x in runs),
            "loadavg_after": open("/proc/loadavg").read().split()[0]}
