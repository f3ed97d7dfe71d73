#!/usr/bin/env python3
"""Compares builds on `bench/run.py --only gateway`'s scenario, in alternating rounds so
that a noisy machine hurts every build alike. Each argument is a folder holding an
`anteroom` and an `anteroom-loadtest` binary (e.g. copies of target/release from two
commits); the load generator of the first folder drives every round.

    python3 bench/compare_gateway.py /tmp/before /tmp/after --rounds 2

Prints one Markdown row per build and round: closed-loop requests/s of the upstream alone,
the gateway and nginx `proxy_pass` (the same run), the gateway's ratio to nginx, each
proxy's CPU per request (µs: its process's CPU over the closed-loop run, /proc, divided by
its requests; it moves less with other work on the machine than the rates do), and the
memory per idle keep-alive connection through each (RSS growth over 2,000 connections).
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios  # noqa: E402
from harness import stop_all  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--duration", type=int, default=10)
    a = ap.parse_args()
    lt = os.path.join(a.builds[0], "anteroom-loadtest")
    print("| build | round | upstream/s | gateway/s | nginx/s | gateway ÷ nginx | CPU µs per request: gateway | nginx "
          "| KiB per idle connection: gateway | nginx | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in range(a.rounds):
        for b in a.builds:
            tmp = tempfile.mkdtemp(prefix="anteroom-cmpgw-")
            try:
                g = scenarios.gateway(b, lt, tmp, a.duration, False)
            finally:
                stop_all()
            rps = {k: g[f"{k}_max"]["requests_per_s"] for k in ("upstream", "gateway", "nginx")}
            m = g["memory"]

            def cpu_us(k):
                x = g[f"{k}_max"]
                c = ((x.get("servers") or [{}])[0].get("cpu_percent")) or 0
                return c / 100 / max(x["requests_per_s"], 1) * 1e6

            print(f"| {os.path.basename(b.rstrip('/'))} | {r + 1} | {rps['upstream']:,.0f} | {rps['gateway']:,.0f} "
                  f"| {rps['nginx']:,.0f} | {rps['gateway'] / rps['nginx']:.3f} "
                  f"| {cpu_us('gateway'):.1f} | {cpu_us('nginx'):.1f} "
                  f"| {m['gateway']['kib_per_connection']:.1f} | {m['nginx']['kib_per_connection']:.1f} "
                  f"| {g['loadavg_at_start']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
