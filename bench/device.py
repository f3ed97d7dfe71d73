#!/usr/bin/env python3
"""Issue 15's figures on a lent many-core machine (the device tool: DEVELOPERS.md), in one
command there. That machine has no Redis and no registry, so everything travels in
`.devbin/` (git-ignored), which `bench/device_pack.sh` fills here:

    bash bench/device_pack.sh      # here: release build, Redis and its libraries

and then, as the device tool's `run` with `carry: [".devbin"]` (one call, ~6 minutes):

    PATH=$PWD/.devbin/bin:$PATH LD_LIBRARY_PATH=$PWD/.devbin/lib PYTHONUNBUFFERED=1 \\
      python3 bench/device.py --bin .devbin/bin --out $OUT

What it measures, each figure beside a ceiling of the same run:
- decisions: the EVALSHA ceiling (`return 1`, 200 clients, 4 benchmark threads), the
  trivial HTTP ceiling (256 connections), join+status on one Redis with 1, 4 and 8 HTTP
  workers (256 connections; Redis's CPU and its time per decision from `INFO
  commandstats`), and the room functions' cost with Redis alone (`redis_fn_cost.one`);
- batch (`--only batch`, not in the default run; ~90 s): joins taken together against one
  call per join, the same build alternated (`store.batch_joins`), 4 and 8 HTTP workers;
- sockets: 50,000 queue sockets over 3 instances, 50,000 and 150,000 over 9 (each instance under
  20,000 descriptors), every socket's longest silence and Redis's CPU at the plateau.

Writes `device.json` (every result) and `device.md` (the tables for BENCHMARKS.md) to
`--out`, and prints the tables. `--smoke`: tiny sizes, to try the kit on this machine.
"""

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import redis_fn_cost  # noqa: E402
import scenarios  # noqa: E402
from harness import COMMANDS, Stack, loadtest, redis_cost, reset_stats  # noqa: E402


def join_status(bin_dir, lt, workers, dur, conns, threads, extra_env=None):
    """join+status as fast as it goes on one instance with `workers` HTTP workers."""
    tmp = tempfile.mkdtemp(prefix="anteroom-device-")
    try:
        s = Stack(bin_dir, tmp, capacity=1000, workers=workers, extra_env=extra_env)
        reset_stats(s.redis_port)
        out = loadtest(lt, "http", "--target", s.url(), "--room", "bench", "--concurrency", conns,
                       "--duration", dur, "--threads", threads, "--pids", f"{s.pids[0]},{s.redis_pid}")
        out["redis"] = redis_cost(s.redis_port, out["requests"])
        s.close()
    finally:
        harness.stop_all()
    return out


def decisions(bin_dir, lt, smoke):
    r = {}
    r["evalsha_ceiling"] = scenarios.redis_ceiling(lt, 20_000 if smoke else 2_000_000, clients=200, threads=4)
    r["http_ceiling"] = scenarios.http_ceiling(lt, 2 if smoke else 10, concurrency=256, threads=4)
    r["join_status"] = {}
    for w in (1, 4, 8):
        r["join_status"][w] = join_status(bin_dir, lt, w, 2 if smoke else 10, 256, 4)
    q, (su, sc, sz), (ju, jc, _) = redis_fn_cost.one(bin_dir, 20_000 if smoke else 200_000)
    r["fn_cost"] = {"queued": q, "status_usec": su, "status_calls": sc, "status_zadds": sz,
                    "join_usec": ju, "join_calls": jc}
    return r


def batch(bin_dir, lt, smoke):
    """Joins taken together against one call per join (`store.batch_joins`), the same
    build, alternated, with 4 and 8 HTTP workers, between two EVALSHA ceilings."""
    n = 20_000 if smoke else 1_000_000
    r = {"evalsha_ceiling": scenarios.redis_ceiling(lt, n, clients=200, threads=4), "runs": []}
    for w in (4, 8):
        for on in (True, False):
            env = None if on else {"ANTEROOM_STORE__BATCH_JOINS": "false"}
            x = join_status(bin_dir, lt, w, 2 if smoke else 10, 256, 4, extra_env=env)
            r["runs"].append({"workers": w, "batch_joins": on, **x})
    r["evalsha_ceiling_after"] = scenarios.redis_ceiling(lt, n, clients=200, threads=4)
    return r


def sockets(bin_dir, lt, smoke):
    r = {}
    # 50,000 over 9 too: Redis CPU with the instances held equal, the sockets tripled.
    for total, instances in ((1_500, 3), (4_500, 9)) if smoke else ((50_000, 3), (50_000, 9), (150_000, 9)):
        tmp = tempfile.mkdtemp(prefix="anteroom-device-")
        try:
            r[f"{total}/{instances}"] = scenarios.sockets(bin_dir, lt, tmp, total, instances)
        finally:
            harness.stop_all()
    return r


def tables(r):
    out = [f"Machine: {r['machine']}", ""]
    if "decisions" in r:
        d = r["decisions"]
        ev, http = d["evalsha_ceiling"], d["http_ceiling"]["requests_per_s"]
        out += [f"Ceilings: EVALSHA `return 1` {ev:,.0f}/s (200 clients, 4 threads); trivial HTTP "
                f"{http:,.0f}/s (256 connections).", "",
                "| HTTP workers | join+status /s | × EVALSHA ceiling | p99 ms | Anteroom CPU % | Redis CPU % "
                "| Redis µs per decision | redis.calls per script |",
                "|---|---|---|---|---|---|---|---|"]
        for w, x in d["join_status"].items():
            srv = x.get("servers") or [{}, {}]
            out.append(f"| {w} | {x['requests_per_s']:,.0f} | {x['requests_per_s'] / ev:.2f} | "
                       f"{x['latency']['p99_ms']:.1f} | {srv[0].get('cpu_percent') or 0:.0f} | "
                       f"{srv[1].get('cpu_percent') or 0:.0f} | {x['redis']['usec_per_decision']:.1f} | "
                       f"{x['redis']['calls_per_script']:.1f} |")
        f = d["fn_cost"]
        out += ["", f"Redis alone ({f['queued']:,} in line): status {f['status_usec']:.2f} µs "
                f"({f['status_calls']:.1f} calls, {f['status_zadds']:.2f} ZADD), newcomer join "
                f"{f['join_usec']:.2f} µs ({f['join_calls']:.1f} calls), mean "
                f"{(f['status_usec'] + f['join_usec']) / 2:.2f} µs per decision.", ""]
    if "batch" in r:
        b = r["batch"]
        ev = min(b["evalsha_ceiling"], b["evalsha_ceiling_after"])
        out += [f"EVALSHA `return 1` ceiling before and after: {b['evalsha_ceiling']:,.0f} and "
                f"{b['evalsha_ceiling_after']:,.0f}/s (200 clients, 4 threads); × below is of the "
                "lower.", "",
                "| HTTP workers | batch_joins | join+status /s | × EVALSHA ceiling | p99 ms "
                "| Anteroom CPU % | Redis CPU % | Redis µs per decision | FCALLs per decision |",
                "|---|---|---|---|---|---|---|---|---|"]
        for x in b["runs"]:
            srv = x.get("servers") or [{}, {}]
            rc = x["redis"]
            out.append(f"| {x['workers']} | {'on' if x['batch_joins'] else 'off'} | "
                       f"{x['requests_per_s']:,.0f} | {x['requests_per_s'] / ev:.2f} | "
                       f"{x['latency']['p99_ms']:.1f} | {srv[0].get('cpu_percent') or 0:.0f} | "
                       f"{srv[1].get('cpu_percent') or 0:.0f} | {rc['usec_per_decision']:.1f} | "
                       f"{rc.get('scripts_per_decision', 0):.3f} |")
        out.append("")
    if "sockets" in r:
        out += ["| sockets / instances | opened | errors | longest silence p99 s | max s "
                "| once the crowd is in: p99 s | max s | Redis CPU % |",
                "|---|---|---|---|---|---|---|---|"]
        for k, s in r["sockets"].items():
            lg = s["loadgen"]
            sil = harness.silences(lg)
            out.append(f"| {k} | {sum(x['sockets_opened'] for x in lg):,} | "
                       f"{sum(sum(x['errors'].values()) for x in lg)} | "
                       f"{sil['p99'] / 1000:.1f} | {sil['max'] / 1000:.1f} | "
                       f"{sil['steady_p99'] / 1000:.1f} | {sil['steady_max'] / 1000:.1f} | "
                       f"{s['redis_cpu_percent']:.1f} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="folder with anteroom and anteroom-loadtest")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", choices=["decisions", "sockets", "batch"])
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    bin_dir = os.path.abspath(a.bin)
    lt = os.path.join(bin_dir, "anteroom-loadtest")
    os.makedirs(a.out, exist_ok=True)
    r = {"machine": harness.machine()}
    if a.only in (None, "decisions"):
        r["decisions"] = decisions(bin_dir, lt, a.smoke)
    if a.only == "batch":
        r["batch"] = batch(bin_dir, lt, a.smoke)
    if a.only in (None, "sockets"):
        r["sockets"] = sockets(bin_dir, lt, a.smoke)
    r["commands"] = COMMANDS
    with open(os.path.join(a.out, "device.json"), "w") as f:
        json.dump(r, f, indent=1)
    md = tables(r)
    with open(os.path.join(a.out, "device.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
