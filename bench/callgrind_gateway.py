#!/usr/bin/env python3
"""Instructions the gateway's thread executes per proxied request, counted by callgrind:
unlike a rate or a CPU time, other work on the machine does not move it, so two builds can
be compared on a shared machine. `bench/run.py --only gateway`'s guarded request (`GET /`
with a pass cookie, in front of `anteroom-loadtest trivial-server`), the instance on the
memory store under `valgrind --tool=callgrind --separate-threads=yes`; counts zeroed after
a 3 s warm-up, then `anteroom-loadtest get` with 64 connections for SECONDS; the threads
that ran gateway code, divided by the requests answered.

    python3 bench/callgrind_gateway.py BUILD_DIR [OUT_DIR] [SECONDS]

BUILD_DIR holds `anteroom` and `anteroom-loadtest` (a copy of target/release); OUT_DIR
(a fresh temporary folder by default) keeps the callgrind files for callgrind_annotate.
"""
import glob, json, os, signal, subprocess, sys, tempfile, urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SIGNING_KEY, free_port, start, stop, stop_all, wait_http, loadtest  # noqa: E402
b = sys.argv[1]
outd = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="anteroom-callgrind-")
secs = int(sys.argv[3]) if len(sys.argv) > 3 else 8
os.makedirs(outd, exist_ok=True)
lt = os.path.join(b, "anteroom-loadtest")
try:
    up = free_port()
    upstream = start([lt, "trivial-server", "--listen", f"127.0.0.1:{up}"])
    wait_http(f"http://127.0.0.1:{up}/")
    port, gw = free_port(), free_port()
    cfg = os.path.join(outd, "a.toml")
    open(cfg, "w").write(f"""
listen = "127.0.0.1:{port}"
secret_key = "bench-secret"
signing_key = "{SIGNING_KEY}"
demo = false
workers = 1
[admin]
enabled = false
[rate_limit]
visitor_requests = 0
ip_per_second = 0
[[rooms]]
id = "bench"
capacity = 1000
session_ttl_secs = 3600
target_url = "http://127.0.0.1:{port}/"
[gateway]
listen = "127.0.0.1:{gw}"
upstream = "http://127.0.0.1:{up}"
[[gateway.routes]]
host = "127.0.0.1"
path_prefix = "/"
room = "bench"
""")
    p = start(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--dump-instr=no",
               f"--callgrind-out-file={outd}/cg.out", os.path.join(b, "anteroom"), "--config", cfg],
              env={"ANTEROOM_LOG": "warn"}, log=open(os.path.join(outd, "vg.log"), "w"))
    wait_http(f"http://127.0.0.1:{port}/readyz", deadline=300)
    j = urllib.request.Request(f"http://127.0.0.1:{port}/api/rooms/bench/join", method="POST")
    pas = json.loads(urllib.request.urlopen(j).read())["pass"]
    # warm up (pool, pass cache), then the counted run
    r = loadtest(lt, "get", "--target", f"http://127.0.0.1:{gw}", "--path", "/", "--header",
                 f"cookie: anteroom_pass_bench={pas}", "--concurrency", 16, "--duration", 3, "--threads", 1)
    subprocess.run(["callgrind_control", "--zero", str(p.pid)], capture_output=True)
    r = loadtest(lt, "get", "--target", f"http://127.0.0.1:{gw}", "--path", "/", "--header",
                 f"cookie: anteroom_pass_bench={pas}", "--concurrency", 64, "--duration", secs, "--threads", 1)
    subprocess.run(["callgrind_control", "--dump=counted", str(p.pid)], capture_output=True)
    n = r["requests"]
    p.send_signal(signal.SIGKILL); p.wait()
    stop(upstream)
    tot = 0; per = []
    for f in glob.glob(f"{outd}/cg.out*"):
        txt = open(f, errors="replace").read()
        if "counted" not in txt[:3000]:
            continue
        ir = 0
        for line in txt.splitlines():
            if line.startswith("summary:") or line.startswith("totals:"):
                ir = int(line.split()[1]); break
        gwcode = "gateway::" in txt
        per.append((os.path.basename(f), ir, gwcode))
        if gwcode:
            tot += ir
    print(json.dumps({"out_dir": outd, "requests": n, "rps_under_valgrind": r["requests_per_s"], "gateway_threads_Ir": tot,
                      "Ir_per_request": tot / max(n, 1), "files": per}, indent=1))
finally:
    stop_all()
