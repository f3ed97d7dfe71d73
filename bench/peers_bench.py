"""Anteroom against the Redis-backed peers of issue 35 item 4, in the same run
(`python3 bench/run.py --only peers`): each system on its own `redis-server`, the same
load for all from wrk (`bench/peers/request.lua`), join then status, in interleaved rounds
(the order turns each round, so a machine whose speed drifts hurts every system alike),
medians over the rounds, beside a ceiling measured with the same wrk in each round (the
trivial actix-web server: what this machine's HTTP stack and wrk do with no work behind).

The peers are built by `bash bench/peers/build.sh` into target/peers/ (their sources are not
in this repository; the script says where they come from, their licenses and the two local
patches). Every system runs with its defaults, one process (Anteroom `workers = 1`: each
Node peer is one event loop), rate limits off for the one client address. Capacity 100 in
Anteroom and nextjs-waiting-room (nextjs-waiting-room's default; simple-waiting-system has
none: everyone queues), so joins after the first 100 queue; statuses are of 1,000
visitors queued before the first round, in turn.
"""

import json
import os
import statistics
import subprocess
import time
import urllib.request

from harness import (COMMANDS, ROOT, Stack, free_port, start, start_redis, stop, wait_http)

PEERS = os.path.join(ROOT, "target", "peers")
SIMPLE = os.path.join(PEERS, "pjt3591oo+simple-waiting-system")
NEXTJS = os.path.join(PEERS, "vercel-labs+nextjs-waiting-room")
SCRIPT = os.path.join(ROOT, "bench", "peers", "request.lua")
QUEUED = 1000  # visitors queued for the status runs
CAPACITY = 100


def _ticks(pid):
    """CPU ticks (user + system) of `pid` and every descendant, from /proc."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            f = open(f"/proc/{p}/stat").read()
            rest = f[f.rfind(")") + 2:].split()
            total += int(rest[11]) + int(rest[12])
            for t in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in open(f"/proc/{p}/task/{t}/children").read().split()]
        except OSError:
            pass
    return total


def _post(url, body=None, headers=None):
    req = urllib.request.Request(url, data=body if body is not None else b"", method="POST",
                                 headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read()


def _get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read()


class System:
    """One system under load: its name, base URL, server pid, Redis pid, and the ids (or
    tokens) of the visitors its status runs ask for."""

    def __init__(self, name, kind, url, pid, redis_pid):
        self.name, self.kind, self.url, self.pid, self.redis_pid = name, kind, url, pid, redis_pid
        self.ids_file = None


def _anteroom(bin_dir, tmp):
    s = Stack(bin_dir, tmp, capacity=CAPACITY, hb=3600, ttl=3600)
    sys_ = System("Anteroom", "anteroom", s.url(), s.pids[0], s.redis_pid)
    sys_.stack = s
    tokens = []
    for _ in range(CAPACITY + QUEUED):
        _, body = _post(s.url() + "/api/rooms/bench/join")
        j = json.loads(body)
        if j.get("state") == "queued":
            tokens.append(j["visitor_token"])
    return sys_, tokens


def _simple(lt, tmp):
    r = start_redis(lt)
    port = free_port()
    log = open(os.path.join(tmp, f"simple-{port}.log"), "w")
    p = start(["node", "bin/www"], env={"PORT": str(port), "REDIS_PORT": str(r.ports[0]),
                                        "NODE_ENV": "production"}, log=log,
              cwd=os.path.join(SIMPLE, "backend"))
    url = f"http://127.0.0.1:{port}"
    _wait(lambda: _get(url + "/waiting/check?userId=none"), 404)
    sys_ = System("simple-waiting-system", "simple", url, p.pid, r.pids[0])
    sys_.redis = r
    ids = []
    for i in range(QUEUED):
        uid = f"q-{i}"
        _post(url + "/waiting/add", json.dumps({"userId": uid}).encode(),
              {"Content-Type": "application/json"})
        ids.append(uid)
    return sys_, ids


def _nextjs(lt, tmp):
    r = start_redis(lt)
    port = free_port()
    log = open(os.path.join(tmp, f"nextjs-{port}.log"), "w")
    env = {"NODE_ENV": "production", "WAITING_ROOM_PROVIDER": "ioredis",
           "REDIS_URL": f"redis://127.0.0.1:{r.ports[0]}",
           "WAITING_ROOM_TOKEN_SECRET": "bench-secret", "NEXT_TELEMETRY_DISABLED": "1",
           "WAITING_ROOM_CAPACITY": str(CAPACITY)}
    p = start(["node", "node_modules/next/dist/bin/next", "start", "-p", str(port),
               "-H", "127.0.0.1"], env=env, log=log, cwd=NEXTJS)
    url = f"http://127.0.0.1:{port}"
    _wait(lambda: _get(url + "/api/waiting-room/status", {"Cookie": "__wr_id=probe"}), 200)
    sys_ = System("nextjs-waiting-room", "nextjs", url, p.pid, r.pids[0])
    sys_.redis = r
    ids = []
    for i in range(CAPACITY + QUEUED):
        uid = f"q-{i}"
        _, body = _get(url + "/api/waiting-room/status", {"Cookie": f"__wr_id={uid}"})
        if json.loads(body).get("status") == "queued":
            ids.append(uid)
    return sys_, ids


def _wait(probe, want, deadline=60):
    end = time.time() + deadline
    while time.time() < end:
        try:
            if probe()[0] == want:
                return
        except urllib.error.HTTPError as e:
            if e.code == want:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"a peer did not answer {want} within {deadline} s")


def _wrk(url, kind, op, dur, ids_file=None, run="0", pids=()):
    """One wrk run (2 threads, 64 connections, `dur` s); its JSON line, plus the CPU % of
    each pid in `pids` over the run."""
    cmd = ["wrk", "-t2", "-c64", f"-d{dur}s", "--latency", "-s", SCRIPT, url]
    env = {**os.environ, "PEER_KIND": kind, "PEER_OP": op, "PEER_RUN": run}
    if ids_file:
        env["PEER_IDS"] = ids_file
    COMMANDS.append(" ".join(f"{k}={env[k]}" for k in ("PEER_KIND", "PEER_OP", "PEER_RUN"))
                    + (f" PEER_IDS={ids_file}" if ids_file else "") + " " + " ".join(cmd))
    before = [_ticks(p) for p in pids]
    t0 = time.time()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=dur + 60)
    wall = time.time() - t0
    hz = os.sysconf("SC_CLK_TCK")
    cpu = [(_ticks(p) - b) / hz / wall * 100 for p, b in zip(pids, before)]
    line = next((l for l in out.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        raise SystemExit(f"wrk gave no figures: {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    j = json.loads(line)
    j["requests_per_s"] = j["requests"] / (j["duration_us"] / 1e6)
    j["cpu_pct"] = cpu
    return j


def peers(bin_dir, lt, tmp, dur, rounds):
    """Starts the three systems and the ceiling, queues the status runs' visitors, then
    runs `rounds` interleaved rounds; returns every run and the medians."""
    for path, what in [(os.path.join(SIMPLE, "backend", "node_modules"), "simple-waiting-system"),
                       (os.path.join(NEXTJS, ".next"), "nextjs-waiting-room")]:
        if not os.path.isdir(path):
            raise SystemExit(f"{what} is not built: run `bash bench/peers/build.sh` first")
    hport = free_port()
    ceiling = start([lt, "trivial-server", "--listen", f"127.0.0.1:{hport}"])
    wait_http(f"http://127.0.0.1:{hport}/")
    systems = []
    for make in (lambda: _anteroom(bin_dir, tmp), lambda: _simple(lt, tmp), lambda: _nextjs(lt, tmp)):
        s, ids = make()
        s.ids_file = os.path.join(tmp, f"ids-{s.kind}.txt")
        with open(s.ids_file, "w") as f:
            f.write("\n".join(ids) + "\n")
        s.queued = len(ids)
        systems.append(s)
    runs = []
    for r in range(rounds):
        c = _wrk(f"http://127.0.0.1:{hport}", "ceiling", "get", dur, run=str(r), pids=(ceiling.pid,))
        runs.append({"round": r + 1, "system": "ceiling", "op": "get", **c})
        order = systems[r % len(systems):] + systems[:r % len(systems)]
        for s in order:
            for op in ("join", "status"):
                x = _wrk(s.url, s.kind, op, dur, s.ids_file if op == "status" else None,
                         run=str(r), pids=(s.pid, s.redis_pid))
                runs.append({"round": r + 1, "system": s.name, "op": op, **x})
                print(f"round {r + 1} {s.name} {op}: {x['requests_per_s']:,.0f}/s "
                      f"p99 {x['p99_us'] / 1000:.1f} ms errors {x['errors']}", flush=True)
    stop(ceiling)
    for s in systems:
        if hasattr(s, "stack"):
            s.stack.close()
        else:
            for p in [p for p in __import__("harness").PROCS if p.pid == s.pid]:
                stop(p)
            s.redis.close()

    def med(system, op, f):
        xs = [f(x) for x in runs if x["system"] == system and x["op"] == op]
        return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)} if xs else None

    medians = {}
    for name in ["ceiling"] + [s.name for s in systems]:
        for op in (("get",) if name == "ceiling" else ("join", "status")):
            medians[f"{name}/{op}"] = {
                "requests_per_s": med(name, op, lambda x: x["requests_per_s"]),
                "p99_ms": med(name, op, lambda x: x["p99_us"] / 1000),
                "server_cpu_pct": med(name, op, lambda x: x["cpu_pct"][0]),
                "redis_cpu_pct": med(name, op, lambda x: x["cpu_pct"][1] if len(x["cpu_pct"]) > 1 else 0),
                "errors": sum(sum(x["errors"].values()) for x in runs
                              if x["system"] == name and x["op"] == op),
            }
    commits = {}
    for name, d in (("simple-waiting-system", SIMPLE), ("nextjs-waiting-room", NEXTJS)):
        try:
            commits[name] = open(os.path.join(d, ".bench-commit")).read().strip()
        except OSError:
            commits[name] = "?"
    load = open("/proc/loadavg").read().split()[0]
    return {"rounds": rounds, "duration_s": dur, "runs": runs, "medians": medians,
            "commits": commits, "queued": {s.name: s.queued for s in systems},
            "loadavg_after": load}
