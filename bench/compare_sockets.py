#!/usr/bin/env python3
"""Compares builds on the 50,000-socket scenario (`scenarios.sockets`: three instances on
one Redis, six load generators), one build after the other. Each argument is a folder
holding an `anteroom` and an `anteroom-loadtest` binary:

    python3 bench/compare_sockets.py /tmp/before /tmp/after [--sockets 50000]

Prints one Markdown row per build: sockets opened, errors, the longest silence any socket
saw (p99 and max over the load generators; over the whole run, and once the crowd is in:
from 5 s after each load generator's last arrival), RSS growth per socket of each instance and
Redis's CPU at the plateau.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import scenarios  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--sockets", type=int, default=50000)
    a = ap.parse_args()
    print("| build | sockets opened | errors | longest silence p99 s | max s | once the crowd is in: p99 s | max s | "
          "RSS growth per socket KiB (three instances) | Redis CPU % |")
    print("|---|---|---|---|---|---|---|---|---|")
    for b in a.builds:
        tmp = tempfile.mkdtemp(prefix="anteroom-sockets-")
        try:
            r = scenarios.sockets(b, os.path.join(b, "anteroom-loadtest"), tmp, a.sockets)
        finally:
            harness.stop_all()
        lg = r["loadgen"]
        sil = harness.silences(lg)
        opened = sum(x["sockets_opened"] for x in lg)
        errors = sum(sum(x["errors"].values()) for x in lg)
        per = [(peak - before) * 1024 / n
               for peak, before, n in zip(r["rss_peak_mb"], r["rss_before_mb"], r["shares"])]
        print(f"| {os.path.basename(b.rstrip('/'))} | {opened:,} | {errors} | {sil['p99'] / 1000:.1f} | {sil['max'] / 1000:.1f} | "
              f"{sil['steady_p99'] / 1000:.1f} | {sil['steady_max'] / 1000:.1f} | "
              f"{', '.join(f'{x:.1f}' for x in per)} | {r['redis_cpu_percent']} |", flush=True)


if __name__ == "__main__":
    main()
