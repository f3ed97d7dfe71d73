#!/usr/bin/env python3
"""Compares builds on the join+status scenario, in alternating rounds so that a noisy
machine hurts every build alike. Each argument is a folder holding an `anteroom` and an
`anteroom-loadtest` binary (e.g. copies of target/release from two commits).

    python3 bench/compare_builds.py /tmp/before /tmp/after /tmp/after+lanes --rounds 3

A build named with `+lanes` runs the same scenario in a room with a priority lane
(`lanes = [{ name = "members", share = 0.3 }]`; the load generator's joins carry no token,
so they queue in the general line through the lanes' code path). A build named with
`+nobatch` runs with one store call per join (`store.batch_joins = false`), and one named
with `+limiter` with the per-visitor limiter on at its default of 30 requests a minute
(the scenario turns it off; each visitor here makes 2 requests, so it only costs).

`--joincost` compares the builds on `bench/run.py --only joincost`'s load instead (joins
only, every one a new visitor, queued then admitted, a fresh instance and Redis per run:
bench/join_cost.py), one row per build, mode and round: joins/s, Redis's whole CPU, the
scripts' time and Anteroom's CPU per join.

Prints one Markdown row per run: the same-run EVALSHA ceiling, join+status requests/s and
p99 at full speed, and Redis script time per decision, `redis.call`s per script and per
decision, and scripts per decision (joins taken together carry several per script) from
`INFO commandstats`, and Redis's whole CPU time per decision from `INFO cpu` (commands
outside scripts and the connections' reads and writes too; see harness.redis_cost).
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import scenarios  # noqa: E402


LANES = 'lanes = [{ name = "members", share = 0.3 }]'
# `+nobatch`: the same build with one call per join (store.batch_joins = false).
# `+limiter`: with the per-visitor limiter on at its default (the scenario turns it off).
VARIANT_ENV = {
    "nobatch": {"ANTEROOM_STORE__BATCH_JOINS": "false"},
    "limiter": {"ANTEROOM_RATE_LIMIT__VISITOR_REQUESTS": "30"},
}


def one(spec):
    bin_dir, _, variant = spec.partition("+")
    lt = os.path.join(bin_dir, "anteroom-loadtest")
    tmp = tempfile.mkdtemp(prefix="anteroom-compare-")
    try:
        ceiling = scenarios.redis_ceiling(lt, 300000)
        out = scenarios.join_status(bin_dir, lt, tmp, 10, False,
                                    room_extra=LANES if variant == "lanes" else "",
                                    extra_env=VARIANT_ENV.get(variant))
    finally:
        harness.stop_all()
    js, rc = out["join_status_max"], out["join_status_redis"]
    name = os.path.basename(bin_dir.rstrip('/')) + (f" ({variant})" if variant else "")
    return (f"| {name} | {ceiling:,.0f} | {js['requests_per_s']:,.0f} | "
            f"{js['latency']['p99_ms']:.1f} | {rc['usec_per_decision']:.1f} | {rc['calls_per_script']:.1f} | "
            f"{rc['scripts_per_decision']:.3f} | {rc['calls_per_decision']:.2f} | "
            f"{rc['cpu_usec_per_decision']:.1f} |")


def joincost(builds, rounds, dur=10):
    import join_cost  # noqa: E402 (only this comparison needs it)
    tmp = tempfile.mkdtemp(prefix="anteroom-compare-")
    print("| build | joins | joins/s | Redis CPU µs / join | Redis script µs / join "
          "| Anteroom CPU µs / join | errors |")
    print("|---|---|---|---|---|---|---|")
    try:
        for r in range(rounds):
            for mode in ("queued", "admitted") if r % 2 == 0 else ("admitted", "queued"):
                for b in builds if r % 2 == 0 else list(reversed(builds)):
                    x = join_cost._one(b, tmp, mode, dur, r)
                    print(f"| {os.path.basename(b.rstrip('/'))} | {mode} | {x['joins_per_s']:,.0f} | "
                          f"{x['redis_cpu_us']:.1f} | {x['redis_script_us']:.1f} | "
                          f"{x['anteroom_cpu_us']:.1f} | {x['errors']} |", flush=True)
    finally:
        harness.stop_all()
    print(f"\nload average after: {open('/proc/loadavg').read().split()[0]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--joincost", action="store_true", help="joins only, queued and admitted (bench/join_cost.py)")
    ap.add_argument("--duration", type=int, default=10, help="seconds per --joincost run")
    a = ap.parse_args()
    if a.joincost:
        return joincost(a.builds, a.rounds, a.duration)
    print("| build | EVALSHA ceiling /s | join+status /s | p99 ms | Redis µs per decision "
          "| redis.calls per script | scripts per decision | redis.calls per decision "
          "| Redis CPU µs per decision |")
    print("|---|---|---|---|---|---|---|---|---|")
    for _ in range(a.rounds):
        for b in a.builds:
            print(one(b), flush=True)


if __name__ == "__main__":
    main()
