#!/usr/bin/env python3
"""Where Redis's CPU per join goes (issue 35 item 2): the joincost load (bench/join_cost.py:
one instance, `workers = 1`, on its own Redis, `wrk -t2 -c64` of new visitors' joins),
read command by command from `INFO commandstats` rather than as one figure.

For each of `queued` (capacity 1, its slot held) and `admitted` (capacity 10,000,000), on
a fresh instance and Redis:

1. an idle window as long as the load (`--duration`), nobody joining: what the instance's
   background calls (hub ticks, ETA basis reads, the revocation log, the room config and
   drops reads, the promoter) cost Redis per second, by command;
2. the load itself, `CONFIG RESETSTAT` before it: per join, each command's calls and µs
   (commands called from a script are counted under their own names, and a script's
   `FCALL`/`EVALSHA` µs include theirs), the script's own share (its µs less those of the
   commands it called: the Lua bridge, argument and reply encoding, Lua-side work), and
   what the whole process spent beyond the scripts (reading and writing connections,
   parsing, pub/sub delivery). The idle window's rate times the load's length is the
   background's share of it.

Beside them, the same-run ceilings: Redis CPU per call of `EVALSHA` of `return 1` and of
`FCALL` of a function returning 1 (redis-benchmark, 50 clients).

    python3 bench/join_breakdown.py [--bin target/release] [--duration 10] [--modes queued,admitted]

Prints Markdown tables and writes target/bench-join-breakdown.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (COMMANDS, ROOT, Stack, commandstats, redis_cpu_s, resp,  # noqa: E402
                     start_redis, stop_all)
from peers_bench import _ticks, _wrk  # noqa: E402

SCRIPTS = ("fcall", "fcall_ro", "evalsha", "eval")
# Our own reads of the figures, not the instance's.
OURS = ("info", "config|resetstat", "ping")


def _ceiling(lt, n=300000):
    """Redis CPU µs per call of a trivial EVALSHA and a trivial FCALL."""
    r = start_redis(lt)
    port = r.ports[0]
    out = {}
    try:
        sha = resp(port, "SCRIPT", "LOAD", "return 1")
        resp(port, "FUNCTION", "LOAD",
             "#!lua name=trivial\nredis.register_function('one', function() return 1 end)")
        for name, args in (("evalsha", ["EVALSHA", sha, "0"]), ("fcall", ["FCALL", "one", "0"])):
            cpu0 = redis_cpu_s(port)
            cmd = ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", "50", "-q"] + args
            COMMANDS.append(" ".join(cmd))
            subprocess.run(cmd, capture_output=True, text=True)
            out[name] = (redis_cpu_s(port) - cpu0) * 1e6 / n
    finally:
        r.close()
    return out


def _diff(a, b):
    return {k: (c - a.get(k, (0, 0))[0], u - a.get(k, (0, 0))[1]) for k, (c, u) in b.items()
            if k not in OURS and c - a.get(k, (0, 0))[0] > 0}


def _one(bin_dir, tmp, mode, dur):
    capacity = 1 if mode == "queued" else 10_000_000
    s = Stack(bin_dir, tmp, capacity=capacity)
    try:
        if mode == "queued":
            urllib.request.urlopen(urllib.request.Request(
                s.url() + "/api/rooms/bench/join", data=b"", method="POST"), timeout=10).read()
        time.sleep(2)  # start-up's first passes are over
        port = s.redis_port
        st0, cpu0, t0 = commandstats(port), redis_cpu_s(port), time.time()
        time.sleep(dur)
        idle_s = time.time() - t0
        idle = _diff(st0, commandstats(port))
        idle_cpu_per_s = (redis_cpu_s(port) - cpu0) / idle_s
        resp(port, "CONFIG", "RESETSTAT")
        cpu0 = redis_cpu_s(port)
        hz = os.sysconf("SC_CLK_TCK")
        a0 = _ticks(s.pids[0])
        t0 = time.time()
        x = _wrk(s.url(), "anteroom", "join", dur, run=f"bd-{mode}", pids=(s.pids[0], s.redis_pid))
        load_s = time.time() - t0
        cpu = redis_cpu_s(port) - cpu0
        anteroom_s = (_ticks(s.pids[0]) - a0) / hz
        load = _diff({}, commandstats(port))
    finally:
        s.close()
    n = max(x["requests"], 1)
    scripts_us = sum(u for k, (c, u) in load.items() if k in SCRIPTS)
    inner_us = sum(u for k, (c, u) in load.items() if k not in SCRIPTS)
    rows = sorted(({"command": k, "calls_per_join": c / n, "us_per_join": u / n,
                    "us_per_call": u / c if c else 0.0} for k, (c, u) in load.items()),
                  key=lambda r: -r["us_per_join"])
    return {
        "mode": mode, "joins": x["requests"], "joins_per_s": x["requests_per_s"],
        "errors": sum(x["errors"].values()), "load_s": load_s,
        "redis_cpu_us": cpu * 1e6 / n,
        "anteroom_cpu_us": anteroom_s * 1e6 / n,
        "script_us": scripts_us / n,
        "inner_us": inner_us / n,
        "script_self_us": (scripts_us - inner_us) / n,
        "outside_scripts_us": (cpu * 1e6 - scripts_us) / n,
        "background_us": idle_cpu_per_s * load_s * 1e6 / n,
        "idle_redis_cpu_pct": idle_cpu_per_s * 100,
        "idle_calls_per_s": {k: c / idle_s for k, (c, u) in idle.items()},
        "commands": rows,
    }


def _print(r):
    print(f"\n### {r['mode']} joins: {r['joins_per_s']:,.0f}/s, {r['errors']} errors\n")
    print(f"Redis CPU {r['redis_cpu_us']:.1f} µs per join (whole process); scripts "
          f"{r['script_us']:.1f} µs, of which the commands they call {r['inner_us']:.1f} and the "
          f"scripts' own work {r['script_self_us']:.1f}; outside the scripts' time "
          f"{r['outside_scripts_us']:.1f}; the idle window's rate charged to the load "
          f"{r['background_us']:.2f} µs per join (Redis {r['idle_redis_cpu_pct']:.2f} % of a core "
          f"idle). Anteroom CPU {r['anteroom_cpu_us']:.1f} µs per join.\n")
    print("| command | calls per join | µs per join | µs per call |")
    print("|---|---|---|---|")
    for c in r["commands"]:
        print(f"| {c['command']} | {c['calls_per_join']:.3f} | {c['us_per_join']:.2f} | {c['us_per_call']:.2f} |")
    print("\nidle calls per second: " + ", ".join(
        f"{k} {v:.1f}" for k, v in sorted(r["idle_calls_per_s"].items())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release"))
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--modes", default="queued,admitted")
    a = ap.parse_args()
    lt = os.path.join(a.bin, "anteroom-loadtest")
    tmp = tempfile.mkdtemp(prefix="anteroom-breakdown-")
    out = {"bin": a.bin, "duration_s": a.duration, "runs": []}
    try:
        out["ceiling_us"] = _ceiling(lt)
        print(f"same-run ceilings, Redis CPU per call: EVALSHA 'return 1' "
              f"{out['ceiling_us']['evalsha']:.2f} µs, FCALL of a function returning 1 "
              f"{out['ceiling_us']['fcall']:.2f} µs")
        for mode in a.modes.split(","):
            r = _one(a.bin, tmp, mode, a.duration)
            out["runs"].append(r)
            _print(r)
    finally:
        stop_all()
    out["loadavg_after"] = open("/proc/loadavg").read().split()[0]
    out["commands_run"] = COMMANDS
    with open(os.path.join(ROOT, "target", "bench-join-breakdown.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"\nload average after: {out['loadavg_after']}")


if __name__ == "__main__":
    main()
