"""The benchmark scenarios: one function per measurement. Each starts what it measures
(through harness.py), drives the load generator and returns its figures, which
run.py stores under one key of the results (see report.py for how they are read).
"""

import http.client
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import time
import urllib.request

from harness import (COMMANDS, SIGNING_KEY, Stack, children, cpu_over, free_port, loadtest,
                     loadtest_result, redis_cost, reset_stats, resp, rss, spawn_loadtest, start, start_redis,
                     stop, used_memory, wait_http)


def redis_ceiling(lt, n, clients=50, threads=0):
    """Ceiling: redis-benchmark, `clients` clients (on `threads` threads when > 0), `n`
    EVALSHA calls of `return 1` on a fresh Redis."""
    r = start_redis(lt)
    port = r.ports[0]
    sha = resp(port, "SCRIPT", "LOAD", "return 1")
    cmd = ["redis-benchmark", "-p", str(port), "-n", str(n), "-c", str(clients), "-q"]
    if threads > 0:
        cmd += ["--threads", str(threads)]
    cmd += ["EVALSHA", sha, "0"]
    COMMANDS.append(" ".join(cmd))
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    r.close()
    m = re.findall(r"([\d.]+) requests per second", out)
    return float(m[-1]) if m else 0.0


def http_ceiling(lt, dur, concurrency=64, threads=1):
    """Ceiling: `anteroom-loadtest get` against the load generator's trivial HTTP server."""
    hport = free_port()
    srv = start([lt, "trivial-server", "--listen", f"127.0.0.1:{hport}"])
    wait_http(f"http://127.0.0.1:{hport}/")
    out = loadtest(lt, "get", "--target", f"http://127.0.0.1:{hport}", "--path", "/",
                   "--concurrency", concurrency, "--duration", dur, "--threads", threads)
    srv.send_signal(signal.SIGTERM)
    return out


def join_status(bin_dir, lt, tmp, dur, smoke, room_extra="", extra_env=None):
    """join + status on Redis, as fast as it goes, then at 5,000 requests/s (500 in smoke);
    returns both figures under their results keys. `room_extra`: more keys for the room
    (e.g. its priority lanes); `extra_env`: more settings for the instance (ANTEROOM_*)."""
    s = Stack(bin_dir, tmp, capacity=1000, room_extra=room_extra, extra_env=extra_env)
    pids = f"{s.pids[0]},{s.redis_pid}"
    out = {}
    reset_stats(s.redis_port)
    out["join_status_max"] = loadtest(lt, "http", "--target", s.url(), "--room", "bench", "--concurrency", 64,
                                      "--duration", dur, "--threads", 1, "--pids", pids)
    # What each decision cost Redis (the promoter, reaper and ETA reads of the same
    # seconds are in the figures too: a few scripts a second against thousands).
    out["join_status_redis"] = redis_cost(s.redis_port, out["join_status_max"]["requests"])
    out["join_status_5k"] = loadtest(lt, "http", "--target", s.url(), "--room", "bench", "--concurrency", 64,
                                     "--rate", 500 if smoke else 5000, "--duration", dur, "--threads", 1,
                                     "--pids", pids)
    s.close()
    return out


def memstore(lt, dur):
    """Memory store decisions (join + status without HTTP or Redis)."""
    return loadtest(lt, "memstore", "--tasks", 2, "--duration", dur)


def memory_http(bin_dir, lt, tmp, dur, rounds=2):
    """join + status over HTTP on the memory store (one instance, no Redis, capacity 1000,
    `workers = 1`), 64 connections, beside the trivial-HTTP ceiling measured just before it,
    `rounds` times (a fresh instance each round, so each starts with an empty line). Issue
    35's stall check: p99 against p50. After it in each round, the same load against the
    in-process single-node prototype (`anteroom-loadtest prototype-server`: a `BTreeMap`
    behind a mutex, one worker, capacity 1000): item 3 asks for at least its rate."""
    out = []
    for i in range(rounds):
        ceiling = http_ceiling(lt, dur)
        port = free_port()
        cfg = os.path.join(tmp, f"anteroom-memory-{port}.toml")
        with open(cfg, "w") as f:
            f.write(f"""
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
session_ttl_secs = 60
heartbeat_timeout_secs = 120
target_url = "http://127.0.0.1:{port}/"
max_places_per_ip = 0
""")
        log = open(os.path.join(tmp, f"anteroom-memory-{port}.log"), "w")
        p = start([os.path.join(bin_dir, "anteroom"), "--config", cfg], env={"ANTEROOM_LOG": "warn"}, log=log)
        wait_http(f"http://127.0.0.1:{port}/readyz")
        run = loadtest(lt, "http", "--target", f"http://127.0.0.1:{port}", "--room", "bench",
                       "--concurrency", 64, "--duration", dur, "--threads", 1, "--pids", p.pid)
        stop(p)
        pport = free_port()
        proto = start([lt, "prototype-server", "--listen", f"127.0.0.1:{pport}", "--capacity", "1000"])
        wait_http(f"http://127.0.0.1:{pport}/")
        prun = loadtest(lt, "http", "--target", f"http://127.0.0.1:{pport}", "--room", "bench",
                        "--concurrency", 64, "--duration", dur, "--threads", 1, "--pids", proto.pid)
        stop(proto)
        out.append({"round": i + 1, "ceiling": ceiling, "join_status": run, "prototype": prun})
    return out


def ws_two_instances(bin_dir, lt, tmp, smoke):
    """WebSocket crowd on two instances sharing one Redis: admissions pushed across
    instances. One load-generator process per instance; returns their two results."""
    s = Stack(bin_dir, tmp, instances=2, capacity=50, ttl=30, hb=30)
    n = 200 if smoke else 4000
    procs = []
    for i in range(2):
        procs.append(spawn_loadtest(
            lt, "ws", "--target", s.url(i), "--room", "bench", "--visitors", n // 2,
            "--arrival-rate", 100 if smoke else 500, "--duration", 4 if smoke else 25,
            "--think-ms", 200 if smoke else 1000, "--abandon-share", 0.1, "--threads", 1,
            "--pids", f"{s.pids[i]},{s.redis_pid}"))
    outs = [loadtest_result(p, 600) for p in procs]
    s.close()
    return outs


def cluster(bin_dir, lt, tmp, dur):
    """join+status on a 3-master cluster: one room (one shard does all the work) and
    three rooms on three shards at once."""
    ports = start_redis(lt, cluster=True).ports
    url = "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)
    port = free_port()
    cfg = os.path.join(tmp, "cluster.toml")
    rooms = ""
    for rid in ("c1", "c2", "c3", "c4", "c5", "c6"):
        # max_places_per_ip = 0: the load generator joins everyone from one address.
        rooms += f'[[rooms]]\nid = "{rid}"\ncapacity = 1000\ntarget_url = "http://127.0.0.1:{port}/"\nmax_places_per_ip = 0\n'
    with open(cfg, "w") as f:
        f.write(f"""
listen = "127.0.0.1:{port}"
redis_url = "{url}"
key_prefix = "bench"
secret_key = "bench-secret"
signing_key = "{SIGNING_KEY}"
demo = false
[admin]
enabled = false
[rate_limit]
visitor_requests = 0
ip_per_second = 0
{rooms}""")
    log = open(os.path.join(tmp, "cluster-anteroom.log"), "w")
    start([os.path.join(bin_dir, "anteroom"), "--config", cfg], env={"ANTEROOM_LOG": "warn"}, log=log)
    wait_http(f"http://127.0.0.1:{port}/readyz")
    target = f"http://127.0.0.1:{port}"
    # Which shard owns each room (by its hash tag's slot).
    slots = {}
    for rid in ("c1", "c2", "c3", "c4", "c5", "c6"):
        slots[rid] = resp(ports[0], "CLUSTER", "KEYSLOT", f"{{{rid}}}")
    ranges = resp(ports[0], "CLUSTER", "SLOTS")

    def shard(slot):
        for r in ranges:
            if r[0] <= slot <= r[1]:
                return r[2][1]
    by_shard = {}
    for rid, sl in slots.items():
        by_shard.setdefault(shard(sl), rid)
    spread = list(by_shard.values())[:3]
    one = loadtest(lt, "http", "--target", target, "--room", spread[0], "--concurrency", 64, "--duration", dur, "--threads", 1)
    procs = [spawn_loadtest(lt, "http", "--target", target, "--room", rid, "--concurrency", 22,
                            "--duration", dur, "--threads", 1)
             for rid in spread]
    many = [loadtest_result(pr, 300) for pr in procs]
    # The cluster and this instance stay up until run.py's stop_all(), as before the split.
    return {"one_room": one, "rooms_on_shards": {rid: m for rid, m in zip(spread, many)}}


def sockets(bin_dir, lt, tmp, total, instances=3):
    """`total` queue sockets over `instances` instances (≤ 20,000 descriptors per
    process), the load spread over two load generators per instance and loopback source
    addresses."""
    s = Stack(bin_dir, tmp, instances=instances, capacity=1, ttl=3600, hb=300)
    # Hold the one slot so everybody queues.
    urllib.request.urlopen(urllib.request.Request(f"{s.url(0)}/api/rooms/bench/join", method="POST")).read()
    if instances == 3:
        # One process may hold 20,000 descriptors: the first instance takes 19,500
        # sockets (≥ 19,000 as the target asks), the other two share the rest.
        first = min(19_500, total * 4 // 10)
        shares = [first, (total - first) // 2]
        shares.append(total - sum(shares))
    else:
        shares = [total // instances] * instances
        shares[-1] += total - sum(shares)
    assert max(shares) <= 19_500, f"{max(shares)} sockets on one instance: over its descriptors"
    rss_before = [rss(pid) for pid in s.pids]
    procs = []
    for i, n in enumerate(shares):
        per = [n // 2, n - n // 2]
        for j, m in enumerate(per):
            ips = ",".join(f"127.0.{i + 1}.{j * 10 + k + 2}" for k in range(4))
            procs.append(spawn_loadtest(
                lt, "ws", "--target", s.url(i), "--room", "bench", "--visitors", m,
                "--arrival-rate", 350, "--duration", 70, "--think-ms", 1000, "--threads", 1,
                "--bind-ips", ips, "--pids", f"{s.pids[i]},{s.redis_pid}"))
    # Sample at the plateau (all sockets open after ~25 s): memory and Redis CPU.
    time.sleep(45)
    rss_peak = [rss(pid) for pid in s.pids]
    redis_cpu = cpu_over(s.redis_pid, 8)
    outs = [loadtest_result(p, 900) for p in procs]
    s.close()
    return {"shares": shares, "loadgen": outs, "rss_before_mb": rss_before, "rss_peak_mb": rss_peak,
            "redis_cpu_percent": redis_cpu}


# Writes n queue entries the way a join does (ticket, heartbeat, join time).
FILL = """
local q, hb, jt, st = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local from, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000
for i = from, from + n - 1 do
  local v = string.format('%032x', i)
  redis.call('ZADD', q, i, v); redis.call('ZADD', hb, now, v); redis.call('HSET', jt, v, now)
end
redis.call('HSET', st, 'seq', from + n - 1)
return n
"""


def million(bin_dir, lt, tmp, n=1_000_000):
    """A room with `n` queued visitors: join/status latency against it, a reaper pass
    over `n` stale heartbeats (Redis's longest single command, from SLOWLOG), and Redis
    memory per queued visitor."""
    s = Stack(bin_dir, tmp, capacity=1, ttl=3600, hb=3600,
              extra_env={"ANTEROOM_REAPER__INTERVAL_MS": "200"})
    port = s.redis_port
    keys = [f"bench:room:{{bench}}:{k}" for k in ("q", "hb", "jt", "st")]
    base_mem = used_memory(port)
    # The same entries the join script writes (ticket, heartbeat, join time), 10,000 per call.
    sha = resp(port, "SCRIPT", "LOAD", FILL)
    for from_ in range(1, n + 1, 10_000):
        resp(port, "EVALSHA", sha, 4, *keys, from_, min(10_000, n + 1 - from_))
    mem_per = (used_memory(port) - base_mem) / n
    lat = loadtest(lt, "http", "--target", s.url(), "--room", "bench", "--concurrency", 32, "--rate", 2000,
                   "--duration", 10, "--threads", 1, "--pids", f"{s.pids[0]},{s.redis_pid}")
    qlen = resp(port, "ZCARD", keys[0])
    # Every heartbeat stale at once: all set to 0 (one ZUNIONSTORE, before the slow log
    # starts; the joins above put theirs a heartbeat step ahead of the clock, so a shorter
    # timeout alone would leave them for up to 225 s). The running reaper then drops them
    # in bounded batches.
    resp(port, "ZUNIONSTORE", keys[1], 1, keys[1], "WEIGHTS", 0)
    resp(port, "CONFIG", "SET", "slowlog-log-slower-than", "0")
    resp(port, "CONFIG", "SET", "slowlog-max-len", "200000")
    resp(port, "SLOWLOG", "RESET")
    t0 = time.time()
    end = time.time() + 600
    while time.time() < end and resp(port, "ZCARD", keys[0]) > 0:
        time.sleep(0.2)
    took = time.time() - t0
    left = resp(port, "ZCARD", keys[0])
    entries = resp(port, "SLOWLOG", "GET", "200000") or []
    durations = [e[2] for e in entries if isinstance(e, list) and len(e) > 2]
    reaps = [e[2] for e in entries if isinstance(e, list) and len(e) > 3 and isinstance(e[3], list)
             and e[3] and str(e[3][0]).upper() in ("EVALSHA", "FCALL")]
    s.close()
    return {"queued": qlen, "mem_per_visitor_bytes": mem_per, "latency_2k": lat,
            "reaper": {"seconds": round(took, 2), "left": left,
                       "max_command_us": max(durations) if durations else None,
                       "max_script_us": max(reaps) if reaps else None,
                       "commands_logged": len(durations)}}


def drop(bin_dir, lt, tmp, n=10_000, watchers=200):
    """A launch-day drop on Redis: `n` visitors join the pre-queue of a room that opens
    once they are all in (`opens_at` set far enough ahead for the joins), `watchers` of
    them holding the queue page's WebSocket. The load generator measures, from
    `opens_at`: the shuffle (until the fairness record reveals the seed), each watcher's
    first frame out of the pre-queue and the first `admitted`; beside them the socket's
    own round trip and the shuffle's arithmetic alone. Redis's longest command comes from
    SLOWLOG (every command logged, as in `million`): during the opening, and during the
    joins before it (the same run's ordinary traffic)."""
    # Time for the joins (at a pessimistic 400 a second) and the sockets, then the opening.
    lead_s = 8 + n / 400
    opens = time.time() + lead_s
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    opens = float(int(opens) + 1)  # whole seconds: RFC 3339 without fractions
    room_extra = f'prequeue_opens_at = "{iso(time.time() - 60)}"\nopens_at = "{iso(opens)}"'
    s = Stack(bin_dir, tmp, capacity=100, ttl=3600, hb=3600, room_extra=room_extra)
    port = s.redis_port
    resp(port, "CONFIG", "SET", "slowlog-log-slower-than", "0")
    resp(port, "CONFIG", "SET", "slowlog-max-len", "1000000")
    resp(port, "SLOWLOG", "RESET")
    p = spawn_loadtest(lt, "drop", "--target", s.url(), "--room", "bench", "--visitors", n,
                       "--watchers", min(watchers, n), "--concurrency", 64,
                       "--opens-at-ms", int(opens * 1000), "--wait-s", 30, "--threads", 1)
    # The joins' longest command, read a second before the opening; then the opening's.
    time.sleep(max(0.0, opens - 1.0 - time.time()))
    before = slowest(resp(port, "SLOWLOG", "GET", "1000000") or [])
    resp(port, "SLOWLOG", "RESET")
    out = loadtest_result(p, lead_s + 120)
    during = slowest(resp(port, "SLOWLOG", "GET", "1000000") or [])
    queued = resp(port, "ZCARD", "bench:room:{bench}:q")
    s.close()
    return {"visitors": n, "loadgen": out, "queued_after": queued,
            "redis_longest_opening": during, "redis_longest_joins": before}


def slowest(entries):
    """The longest entry of a SLOWLOG GET: its µs and its command (name and first key),
    leaving out the measurement's own commands (a SLOWLOG RESET of a long log is slow)."""
    best = None
    for e in entries:
        if not (isinstance(e, list) and len(e) > 3):
            continue
        args = [a.decode() if isinstance(a, bytes) else str(a) for a in (e[3] or [])[:3]]
        if args and args[0].upper() in ("SLOWLOG", "CONFIG"):
            continue
        if best is None or e[2] > best[0]:
            best = (e[2], " ".join(args))
    return {"us": best[0], "command": best[1], "logged": len(entries)} if best else None


NGINX_CONF = """
user root;
worker_processes 1;
worker_rlimit_nofile 20000;
error_log {d}/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections 10000; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    keepalive_requests 1000000;
    upstream site {{ server 127.0.0.1:{upstream}; keepalive 64; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://site;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
    }}
}}
"""


def idle_connections(port, n, headers):
    """Opens `n` keep-alive connections to 127.0.0.1:`port`, makes one `GET /` on each
    (read to the end) and returns them open and idle."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard))
    conns = []
    for _ in range(n):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/", headers=headers)
        r = c.getresponse()
        r.read()
        if r.status != 200:
            raise SystemExit(f"GET / through :{port} answered {r.status}")
        conns.append(c)
    return conns


def memory_per_connection(pid, port, n, headers):
    """RSS growth of `pid` (KiB) per idle keep-alive connection, over `n` connections
    from the start (`kib_per_connection`: it includes what the process grows by once,
    whatever the count), then over `n` more opened on top of those
    (`marginal_kib_per_connection`: what one more idle connection costs)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * n + 1000), hard))
    before = rss(pid)
    conns = idle_connections(port, n, headers)
    time.sleep(1)
    after = rss(pid)
    more = idle_connections(port, n, headers)
    time.sleep(1)
    after_more = rss(pid)
    for c in conns + more:
        c.close()
    return {"connections": n, "rss_before_mb": before, "rss_after_mb": after,
            "rss_after_more_mb": after_more,
            "kib_per_connection": (after - before) * 1024 / n,
            "marginal_kib_per_connection": (after_more - after) * 1024 / n}


def gateway(bin_dir, lt, tmp, dur, smoke):
    """The built-in gateway against nginx `proxy_pass`, in front of the same upstream
    (`anteroom-loadtest trivial-server`), with the upstream alone as the ceiling: `GET /`
    on a guarded route with a valid pass cookie, closed loop (64 connections), then open
    loop at 5,000 requests/s (500 in smoke); then memory per idle keep-alive connection
    through each proxy. The route is guarded on the host `127.0.0.1` only, so the same
    requests to `localhost` are proxied without a pass check: the cost of the check. The
    gateway has one thread (`workers = 1`) and nginx one worker
    process; the load generator one thread."""
    first_command = len(COMMANDS)
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if not nginx:
        raise SystemExit("nginx is needed for the gateway scenario (apt-get install nginx)")
    up_port = free_port()
    upstream = start([lt, "trivial-server", "--listen", f"127.0.0.1:{up_port}"])
    wait_http(f"http://127.0.0.1:{up_port}/")
    gw_port = free_port()
    s = Stack(bin_dir, tmp, capacity=1000, ttl=3600, extra_toml=f"""
[gateway]
listen = "127.0.0.1:{gw_port}"
upstream = "http://127.0.0.1:{up_port}"
[[gateway.routes]]
host = "127.0.0.1"
path_prefix = "/"
room = "bench"
""")
    # A visitor admitted to the room: its pass opens the guarded route.
    join = urllib.request.Request(f"{s.url()}/api/rooms/bench/join", method="POST")
    pass_ = json.loads(urllib.request.urlopen(join).read())["pass"]
    cookie = f"anteroom_pass_bench={pass_}"
    # Without the pass the route is guarded (a redirect to the queue); with it, proxied.
    c = http.client.HTTPConnection("127.0.0.1", gw_port, timeout=10)
    c.request("GET", "/")
    guarded = c.getresponse().status
    c.close()
    if guarded != 302:
        raise SystemExit(f"the gateway's route is not guarded (answered {guarded} without a pass)")
    for c in idle_connections(gw_port, 1, {"Cookie": cookie}):  # fails unless 200
        c.close()

    ng_port = free_port()
    d = os.path.join(tmp, "nginx")
    os.makedirs(d, exist_ok=True)
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(d=d, upstream=up_port, port=ng_port))
    ng = start([nginx, "-p", d, "-c", conf, "-g", "daemon off;"])
    wait_http(f"http://127.0.0.1:{ng_port}/")
    ng_worker = (children(ng.pid) or [ng.pid])[0]

    targets = {
        "upstream": (up_port, [], [upstream.pid]),
        "gateway": (gw_port, ["--header", f"cookie: {cookie}"], [s.pids[0], upstream.pid]),
        "nginx": (ng_port, [], [ng_worker, upstream.pid]),
    }
    unguarded = ("localhost", gw_port, [], [s.pids[0], upstream.pid])
    out = {"threads": {"gateway": 1, "nginx_workers": 1, "loadgen": 1},
           "loadavg_at_start": os.getloadavg()[0]}
    n = 100 if smoke else 2000
    out["memory"] = {
        "gateway": memory_per_connection(s.pids[0], gw_port, n, {"Cookie": cookie}),
        "nginx": memory_per_connection(ng_worker, ng_port, n, {}),
    }
    rate = 500 if smoke else 5000
    for mode, extra in (("max", []), ("fixed", ["--rate", rate])):
        runs = [(name, "127.0.0.1", *t) for name, t in targets.items()]
        runs.append(("gateway_unguarded", *unguarded))
        for name, host, port, header, pids in runs:
            out[f"{name}_{mode}"] = loadtest(
                lt, "get", "--target", f"http://{host}:{port}", "--path", "/", *header,
                "--concurrency", 64, "--duration", dur, "--threads", 1, *extra,
                "--pids", ",".join(str(p) for p in pids))
    out["rate"] = rate
    # The pass is a credential: keep it out of the saved command lines.
    for i, cmd in enumerate(COMMANDS):
        COMMANDS[i] = cmd.replace(pass_, "<pass>")
    out["commands"] = COMMANDS[first_command:]
    stop(ng)
    s.close()
    stop(upstream)
    return out
