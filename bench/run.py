#!/usr/bin/env python3
"""Anteroom benchmark suite: one command starts Redis, Anteroom and the load generator,
runs every scenario, and writes BENCHMARKS.md with the figures, the commands and the
machine. Every figure sits beside a ceiling measured in the same run (this machine is
shared and noisy).

    python3 bench/run.py            # full run (release build; several minutes)
    python3 bench/run.py --smoke    # a few seconds per scenario, small N (CI)
    python3 bench/run.py --only gateway   # one scenario; rewrites only its section
    python3 bench/run.py --only drop --drop-visitors 500   # a launch-day drop, small
    bash bench/peers/build.sh && python3 bench/run.py --only peers   # against the peers

All traffic stays on loopback; every load is bounded in time and count.

This file is the command line: it builds, calls the scenarios in turn, saves the raw
figures to target/bench-results.json and writes the report. The rest lives beside it:
harness.py (processes, ports, sampling, a RESP client, and Redis, which the load
generator's `anteroom-loadtest redis [--cluster]` starts and stops), scenarios.py (one
function per measurement) and report.py (BENCHMARKS.md).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scenarios  # noqa: E402
from harness import COMMANDS, ROOT, machine, stop_all  # noqa: E402
from report import replace_section, write_report  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="tiny, fast run (CI)")
    ap.add_argument("--debug", action="store_true", help="use the debug build (smoke)")
    ap.add_argument("--no-build", action="store_true", help="use the binaries already built")
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--sockets", type=int, default=50000, help="WebSocket scenario size")
    ap.add_argument("--drop-visitors", type=int, default=10000, help="drop scenario size (pre-queue)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (--only peers)")
    ap.add_argument("--only", choices=["gateway", "drop", "memory", "peers", "joincost"],
                    help="run this scenario alone and rewrite only its section of the report")
    ap.add_argument("--report-only", metavar="RESULTS_JSON",
                    help="rewrite the report from a saved results file, without running anything")
    a = ap.parse_args()
    if a.report_only:
        saved = json.load(open(a.report_only))
        if "join_status_max" in saved:
            write_report(saved, a.out)
        else:  # the results of an --only run
            replace_section(saved, a.out)
        return
    smoke = a.smoke
    profile = "debug" if a.debug else "release"
    if not a.no_build:
        build = ["cargo", "build", "--bins"] + ([] if a.debug else ["--release"])
        subprocess.run(build, cwd=ROOT, check=True)
    bin_dir = os.path.join(ROOT, "target", profile)
    lt = os.path.join(bin_dir, "anteroom-loadtest")
    for tool in ["redis-server", "redis-benchmark"] + ([] if smoke else ["redis-cli"]):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is needed (apt-get install redis-server redis-tools)")
    dur = 2 if smoke else 10
    tmp = tempfile.mkdtemp(prefix="anteroom-bench-")
    results = {"machine": machine(), "smoke": smoke, "profile": profile}
    if a.only:
        try:
            if a.only == "drop":
                results["drop"] = scenarios.drop(bin_dir, lt, tmp, a.drop_visitors)
            elif a.only == "memory":
                results["memory_http"] = scenarios.memory_http(bin_dir, lt, tmp, dur)
            elif a.only == "joincost":
                if not shutil.which("wrk"):
                    raise SystemExit("wrk is needed (apt-get install wrk)")
                import join_cost  # noqa: E402 (only this run needs it)
                results["join_cost"] = join_cost.join_cost(bin_dir, lt, tmp, 2 if smoke else dur, a.rounds)
            elif a.only == "peers":
                if not shutil.which("wrk"):
                    raise SystemExit("wrk is needed (apt-get install wrk)")
                import peers_bench  # noqa: E402 (only this run needs it)
                results["node"] = subprocess.run(["node", "--version"], capture_output=True,
                                                 text=True).stdout.strip()
                results["peers"] = peers_bench.peers(bin_dir, lt, tmp, 2 if smoke else dur, a.rounds)
            else:
                results["gateway"] = scenarios.gateway(bin_dir, lt, tmp, 1 if smoke else dur, smoke)
        finally:
            stop_all()
        results["commands"] = COMMANDS
        os.makedirs(os.path.join(ROOT, "target"), exist_ok=True)
        with open(os.path.join(ROOT, "target", f"bench-{a.only}-results.json"), "w") as f:
            json.dump(results, f, indent=1)
        replace_section(results, a.out)
        print(json.dumps(results, indent=1)[:3000])
        if a.only == "drop":
            d = results["drop"]["loadgen"]
            ok = d["shuffle_ms"] is not None and d["first_push_ms"] is not None and d["margin_ms"] > 0
        elif a.only == "memory":
            ok = all(x["join_status"]["requests"] > 0 for x in results["memory_http"])
        elif a.only == "peers":
            ok = all(x["requests"] > 0 for x in results["peers"]["runs"])
        elif a.only == "joincost":
            ok = all(x["joins"] > 0 for x in results["join_cost"]["runs"])
        else:
            ok = results["gateway"]["gateway_max"]["requests"] > 0
        print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
        sys.exit(0 if ok else 1)
    try:
        # Ceilings measured in this same run.
        results["redis_evalsha_ceiling"] = scenarios.redis_ceiling(lt, 20000 if smoke else 300000)
        results["http_ceiling"] = scenarios.http_ceiling(lt, dur)
        # join + status on Redis, as fast as it goes, then at 5,000 requests/s.
        results.update(scenarios.join_status(bin_dir, lt, tmp, dur, smoke))
        results["memstore"] = scenarios.memstore(lt, dur)
        results["ws_two_instances"] = scenarios.ws_two_instances(bin_dir, lt, tmp, smoke)
        results["gateway"] = scenarios.gateway(bin_dir, lt, tmp, 1 if smoke else dur, smoke)
        if not smoke:
            results["cluster"] = scenarios.cluster(bin_dir, lt, tmp, dur)
            results["sockets"] = scenarios.sockets(bin_dir, lt, tmp, a.sockets)
            results["million"] = scenarios.million(bin_dir, lt, tmp)
    finally:
        stop_all()
    results["commands"] = COMMANDS
    os.makedirs(os.path.join(ROOT, "target"), exist_ok=True)
    with open(os.path.join(ROOT, "target", "bench-results.json"), "w") as f:
        json.dump(results, f, indent=1)
    write_report(results, a.out)
    print(json.dumps(results, indent=1)[:3000])
    ok = (results["join_status_max"]["requests"] > 0
          and all(o["sockets_opened"] > 0 for o in results["ws_two_instances"])
          and results["gateway"]["gateway_max"]["requests"] > 0)
    print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    try:
        main()
    finally:
        stop_all()
