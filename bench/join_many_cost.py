#!/usr/bin/env python3
"""Redis's cost of joins taken together, inside Redis alone (issue 35 item 2): the room
function `join_many` called straight by `redis-benchmark`, 25 new visitors a call (what the
joincost load's calls carry: ~0.04 calls a join), Redis pinned to CPU 0 and the client to
CPU 1, no Anteroom on the hot path. Each argument is a folder holding an `anteroom` and an
`anteroom-loadtest` binary (copies of target/release from two commits); a `+fresh` suffix
marks the joins as of visitor ids the instance drew (join's 7th argument, `1`: builds that
know it). An `=FILE` suffix loads FILE over the instance's library before the calls
(`FUNCTION LOAD REPLACE`: a library's text as `--dump-lib` writes it, edited to try a
lever without a build).

    python3 bench/join_many_cost.py /tmp/before /tmp/after+fresh --rounds 3
    python3 bench/join_many_cost.py /tmp/after --dump-lib /tmp/lib.lua
    python3 bench/join_many_cost.py /tmp/after+fresh /tmp/after+fresh=/tmp/lib-edited.lua

For each build and each of `queued` (capacity 1, its slot held) and `admitted` (capacity
10,000,000): a fresh Redis and one Anteroom instance (it declares the `bench` room and
loads its function library), the instance stopped, then `--calls` calls of 25 joins; the
figures are Redis's whole CPU (`INFO cpu`) and the `FCALL`'s usec (`INFO commandstats`,
which include the commands it runs) per join, and the commands run per join. Rounds
alternate the builds.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import COMMANDS, Stack, commandstats, redis_cpu_s, resp  # noqa: E402

PER_CALL = 25
PIN = (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None
SEED = "ab" * 32


def one(spec, mode, calls, tmp, dump=None):
    spec, _, lib_file = spec.partition("=")
    bin_dir, _, variant = spec.partition("+")
    capacity = 1 if mode == "queued" else 10_000_000
    s = Stack(bin_dir, tmp, capacity=capacity)
    try:
        if mode == "queued":  # the one slot, held
            urllib.request.urlopen(urllib.request.Request(
                s.url() + "/api/rooms/bench/join", data=b"", method="POST"), timeout=10).read()
        port = s.redis_port
        names = [f for f in _flat(resp(port, "FUNCTION", "LIST")) if str(f).endswith("_join_many")]
        if not names:
            raise SystemExit(f"no join_many function in {bin_dir}")
        fn = names[0]
        if dump:
            code = [x for x in _flat(resp(port, "FUNCTION", "LIST", "WITHCODE")) if str(x).startswith("#!lua")]
            with open(dump, "w") as f:
                f.write(code[0])
            return None
        if lib_file:
            resp(port, "FUNCTION", "LOAD", "REPLACE", open(lib_file).read())
        cfg_key = "bench:room:{bench}:cfg"
        # The instance stops: nothing else calls Redis while it is measured.
        for p in list(harness.PROCS):
            if p.pid in s.pids:
                harness.stop(p)
        if PIN:
            subprocess.run(["taskset", "-apc", "0", str(s.redis_pid)], capture_output=True)
        args = [str(PER_CALL)]
        for _ in range(PER_CALL):
            args += ["v__rand_int__", "", "0", "", SEED, ""] + (["1"] if variant == "fresh" else [])
        resp(port, "CONFIG", "RESETSTAT")
        cpu0 = redis_cpu_s(port)
        cmd = ["redis-benchmark", "-p", str(port), "-n", str(calls), "-c", "4", "-r", "1000000000",
               "-q", "FCALL", fn, "1", cfg_key, *args]
        if PIN:
            cmd = ["taskset", "-c", "1"] + cmd
        COMMANDS.append(" ".join(cmd[:12]) + " …")
        subprocess.run(cmd, capture_output=True, check=True)
        cpu = redis_cpu_s(port) - cpu0
        st = commandstats(port)
        joins = calls * PER_CALL
        fcall = st.get("fcall", (0, 0))
        inner = sum(c for k, (c, _) in st.items() if k not in ("fcall", "info", "config|resetstat"))
        qlen = resp(port, "ZCARD", cfg_key[:-3] + "q")
        active = resp(port, "ZCARD", cfg_key[:-3] + "act")
    finally:
        s.close()
    return {"build": spec, "mode": mode, "cpu_us": cpu * 1e6 / joins, "fcall_us": fcall[1] / joins,
            "commands": inner / joins, "queued": qlen, "active": active}


def _flat(x):
    if isinstance(x, list):
        for y in x:
            yield from _flat(y)
    else:
        yield x.decode() if isinstance(x, bytes) else x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--modes", default="queued,admitted")
    ap.add_argument("--dump-lib", metavar="FILE", help="write the first build's library to FILE, measure nothing")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="anteroom-jmc-")
    if a.dump_lib:
        try:
            one(a.builds[0], "queued", 0, tmp, dump=a.dump_lib)
        finally:
            harness.stop_all()
        return
    print("| build | joins | Redis CPU µs / join | FCALL µs / join | commands / join | queued, live after |")
    print("|---|---|---|---|---|---|")
    try:
        for r in range(a.rounds):
            for mode in a.modes.split(","):
                for b in (a.builds if r % 2 == 0 else list(reversed(a.builds))):
                    x = one(b, mode, a.calls, tmp)
                    print(f"| {os.path.basename(b.rstrip('/'))} | {mode} | {x['cpu_us']:.2f} | "
                          f"{x['fcall_us']:.2f} | {x['commands']:.2f} | {x['queued']}, {x['active']} |",
                          flush=True)
                    time.sleep(0.5)
    finally:
        harness.stop_all()
    print(f"\nload average after: {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
