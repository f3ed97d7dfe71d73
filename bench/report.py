"""The benchmark report: turns a results dict (as run.py saves it to
target/bench-results.json) into BENCHMARKS.md — the tables, the prose around them, the
Targets table and the commands the run started.
"""

import json
import time

from harness import COMMANDS, silences

# Where the Redis keys of a room are described (linked from the report, not repeated).
KEY_LAYOUT = "docs/design.md#redis-key-layout"


def fmt(x, digits=0):
    if x is None:
        return "–"
    return f"{x:,.{digits}f}"


def median_range(x, digits=0):
    """A spread of rounds as `median (min–max)`."""
    return f"{fmt(x['median'], digits)} ({fmt(x['min'], digits)}–{fmt(x['max'], digits)})"


def targets_section(r):
    """The issue's targets beside what this run measured, with the reason and the next
    lever for each one missed."""
    if r["smoke"]:
        return []
    js, fixed = r["join_status_max"], r["join_status_5k"]
    ceil = r["redis_evalsha_ceiling"]
    rows = [
        ("join + status ≥ 20,000 requests/s", f"{js['requests_per_s']:,.0f}/s", js["requests_per_s"] >= 20000,
         "All three processes (Redis, Anteroom, load generator) share 2 cores and the machine is CPU-bound: "
         "the trivial-HTTP ceiling of the same run is only "
         f"{r['http_ceiling']['requests_per_s']:,.0f}/s, and a join+status pair costs two HTTP requests and two scripts. "
         "Next lever: a cheaper HTTP path per decision (one `POST …/join` that also returns status, connection-level "
         "pipelining of Redis calls from one worker), measured on a machine where the load generator has its own cores."),
        ("join + status ≥ 0.5 × Redis EVALSHA ceiling", f"{js['requests_per_s'] / ceil:.2f} ×", js["requests_per_s"] >= 0.5 * ceil,
         "redis-benchmark drives Redis with 50 pipelined C clients and nothing else running; our figure includes "
         "HTTP parsing, JSON, Ed25519 signing and the load generator on the same 2 cores. Redis itself stayed under "
         f"{(js.get('servers') or [{}, {}])[1].get('cpu_percent') or 0:.0f} % of a core, so Redis is not the limit. "
         "Next lever as above: Anteroom's CPU per decision (see the perf profile in the commit history)."),
        ("p99 ≤ 10 ms at 5,000 requests/s", f"{fixed['latency']['p99_ms']:.2f} ms", fixed["latency"]["p99_ms"] <= 10, ""),
        ("memory store ≥ 100,000 decisions/s", f"{r['memstore']['decisions_per_s']:,.0f}/s", r["memstore"]["decisions_per_s"] >= 100000, ""),
    ]
    push = max(o["push_latency"]["p99_ms"] for o in r["ws_two_instances"])
    rows.append(("admission push p99 ≤ 1 s, across two instances", f"{push:.0f} ms", push <= 1000, ""))
    if "sockets" in r:
        s = r["sockets"]
        peak = [o["peak_open_sockets"] for o in s["loadgen"]]
        per_inst = [peak[0] + peak[1], peak[2] + peak[3], peak[4] + peak[5]]
        total = sum(o["sockets_opened"] for o in s["loadgen"])
        mem = max(((s["rss_peak_mb"][i] or 0) - (s["rss_before_mb"][i] or 0)) * 1024 / max(per_inst[i], 1) for i in range(3))
        sil = silences(s["loadgen"])["p99"]
        rows += [
            ("50,000 concurrent sockets, ≥ 19,000 on one instance", f"{total:,} opened, {max(per_inst):,} on one",
             total >= 50000 and max(per_inst) >= 19000,
             "About 3 % of joins and handshakes fail (408 timeouts, and 503 when a store answer takes longer than "
             "the 5 s timeout) while six load generators, three instances and Redis ramp up together on 2 cores; "
             "at 10,000 sockets on one instance none fail. Next lever: load generators on other cores or machines, "
             "and a slower ramp."),
            ("every socket updated at least every 5 s", f"p99 longest silence {sil / 1000:.1f} s", sil <= 5000,
             "With 50,000 sockets the 2 cores are saturated by the load generators and the instances together "
             "(each socket gets a status every ≤ 5 s and a ping every 15 s). At 10,000 sockets on one instance the "
             "longest silence measured 4.1 s. Next lever: run the load generators on other cores or machines; "
             "send refreshes only to sockets whose figures changed and rely on pings for liveness."),
            ("Redis CPU < 50 % at 50,000 sockets", f"{s['redis_cpu_percent']:.1f} %", s["redis_cpu_percent"] < 50, ""),
            ("memory per socket ≤ 16 KiB", f"{mem:.1f} KiB", mem <= 16,
             "RSS growth also counts allocator slack and the load of the ramp. The heap profile (heaptrack, "
             "`bench/heap_sockets.sh`, see docs/websocket.md) puts 16.2 KiB of a socket's 25.5 KiB in actix-http's two "
             "8 KiB connection buffers, fixed constants kept after the WebSocket upgrade, which no setting changes. "
             "Next lever: free them on upgrade (a patch to actix-http's dispatcher, upstream) or serve queue sockets on "
             "a leaner listener (hyper's upgrade hands over the bare stream): about 9 KiB a socket."),
        ]
    if "million" in r:
        m = r["million"]
        p99 = m["latency_2k"]["latency"]["p99_ms"]
        blk = (m["reaper"]["max_command_us"] or 0) / 1000
        rows += [
            ("1M queued: join + status p99 ≤ 5 ms", f"{p99:.2f} ms", p99 <= 5, ""),
            ("reaper over 1M heartbeats never blocks Redis > 50 ms", f"{blk:.1f} ms longest command", blk <= 50, ""),
        ]
    out = ["", "## Targets", "", "| target | measured | met | why not, and the next lever |", "|---|---|---|---|"]
    for name, got, ok, why in rows:
        out.append(f"| {name} | {got} | {'yes' if ok else '**no**'} | {'' if ok else why} |")
    return out


GATEWAY_TITLE = "## Built-in gateway against nginx"


def gateway_section(r):
    """The gateway, nginx and the upstream alone, from one run of `scenarios.gateway`:
    throughput and latency beside the ceiling, memory per connection, the issue's goals
    and the commands."""
    g = r["gateway"]
    up_max, up_fix = g["upstream_max"], g["upstream_fixed"]
    rate = g["rate"]

    def cpu(x, i=0):
        srv = x.get("servers") or []
        return fmt(srv[i].get("cpu_percent")) if len(srv) > i else "–"

    def p99(x):
        return x["latency"]["p99_ms"]

    lines = [
        "",
        GATEWAY_TITLE,
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} ({r['profile']} build"
        f"{', smoke' if r['smoke'] else ''}) on {r['machine']['cpu']} × {r['machine']['cores']} cores, "
        "by `python3 bench/run.py --only gateway` (or a full run). `GET /` on a route the "
        "[gateway](docs/gateway.md) guards, with a valid pass in the `anteroom_pass_bench` cookie (checked "
        "without the store: its signature once, then kept until it expires; expiry, room and revocations on "
        "every request); the same request through "
        "nginx `proxy_pass` (an upstream `keepalive 64` pool, access log off); and the upstream alone, "
        "`anteroom-loadtest trivial-server` (one actix-web handler answering `ok`), as the ceiling. "
        "The gateway runs one thread (`workers = 1`), nginx one worker process, the load generator one "
        "thread; the upstream's two actix workers and all of these share the machine's cores. "
        f"Closed loop: 64 connections for as long as the answers come; open loop: {rate:,} requests/s "
        "scheduled, latency from the scheduled send time."
        + (f" The 1-minute load average was {g['loadavg_at_start']:.1f} when it started (other work on "
           "the machine takes cores from all three alike)." if "loadavg_at_start" in g else ""),
        "",
        f"| path | closed loop requests/s | × ceiling | p99 ms | at {rate:,}/s: p50 ms | p99 ms | p99 added ms | errors | proxy CPU % (closed / open) | upstream CPU % (closed) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, label in (("upstream", "upstream alone (ceiling)"), ("gateway", "**built-in gateway**"),
                        ("nginx", "nginx `proxy_pass`"),
                        ("gateway_unguarded", "gateway, unguarded (same requests to `localhost`: no pass check)")):
        if f"{name}_max" not in g:
            continue
        mx, fx = g[f"{name}_max"], g[f"{name}_fixed"]
        errors = sum(mx["errors"].values()) + sum(fx["errors"].values())
        proxy = "–" if name == "upstream" else f"{cpu(mx)} / {cpu(fx)}"
        upstream_cpu = cpu(mx) if name == "upstream" else cpu(mx, 1)
        added = "–" if name == "upstream" else f"{p99(fx) - p99(up_fix):+.2f}"
        lines.append(
            f"| {label} | {fmt(mx['requests_per_s'])} | {mx['requests_per_s'] / up_max['requests_per_s']:.2f} | "
            f"{p99(mx):.2f} | {fx['latency']['p50_ms']:.2f} | {p99(fx):.2f} | {added} | {errors} | {proxy} | {upstream_cpu} |")
    mem = g["memory"]
    lines += [
        "",
        f"Memory per proxied connection: {mem['gateway']['connections']:,} keep-alive connections, each "
        "idle after one request through the proxy; growth of the proxy's RSS divided by their number: "
        f"**{mem['gateway']['kib_per_connection']:.1f} KiB** for the gateway (the whole `anteroom` process, "
        f"{fmt(mem['gateway']['rss_before_mb'], 1)} → {fmt(mem['gateway']['rss_after_mb'], 1)} MB), "
        f"{mem['nginx']['kib_per_connection']:.1f} KiB for the nginx worker "
        f"({fmt(mem['nginx']['rss_before_mb'], 1)} → {fmt(mem['nginx']['rss_after_mb'], 1)} MB).",
    ]
    if "marginal_kib_per_connection" in mem["gateway"]:
        lines[-1] += (
            f" Then {mem['gateway']['connections']:,} more opened on top of those, in the same process: "
            f"**{mem['gateway']['marginal_kib_per_connection']:.1f} KiB** each for the gateway "
            f"({fmt(mem['gateway']['rss_after_mb'], 1)} → {fmt(mem['gateway']['rss_after_more_mb'], 1)} MB), "
            f"{mem['nginx']['marginal_kib_per_connection']:.1f} KiB for nginx: the first figure carries what "
            "the process grows by once, whatever the count (the allocator's and the runtime's first slabs), "
            "the second is what one more idle connection costs.")
    if not r["smoke"]:
        gw, ng = g["gateway_max"]["requests_per_s"], g["nginx_max"]["requests_per_s"]
        added = p99(g["gateway_fixed"]) - p99(up_fix)
        ng_added = p99(g["nginx_fixed"]) - p99(up_fix)
        fixed_ok = all(sum(g[f"{n}_fixed"]["errors"].values()) == 0 and
                       g[f"{n}_fixed"]["requests_per_s"] >= 0.95 * rate for n in ("upstream", "gateway"))
        def cpu_us(name):
            """CPU per request of the proxy, µs (its CPU share over its requests/s)."""
            x = g[f"{name}_max"]
            c = ((x.get("servers") or [{}])[0].get("cpu_percent")) or 0
            return c / 100 / max(x["requests_per_s"], 1) * 1e6
        throughput_why = (
            f"The gateway's one thread spends {cpu_us('gateway'):.0f} µs of CPU per request against "
            f"nginx's {cpu_us('nginx'):.0f} µs.")
        if "gateway_unguarded_max" in g:
            un = g["gateway_unguarded_max"]["requests_per_s"]
            throughput_why += (
                f" The same requests without the pass check do {fmt(un)}/s ({cpu_us('gateway_unguarded'):.0f} µs "
                f"each, {un / ng:.2f} × nginx): the check adds about "
                f"{max(cpu_us('gateway') - cpu_us('gateway_unguarded'), 0):.0f} µs (a pass's Ed25519 signature is "
                "verified once and kept until it expires), so what is left is the proxying itself: hyper's server "
                "and pooled client, the header rewriting and the path normalisation, against nginx's C event loop. "
                "A `perf` profile of that path (issue 35 item 6) is flat: about "
                "half the gateway thread's time is the kernel's socket reads and writes, hyper's two HTTP/1.1 "
                "connections most of the rest, and the gateway's own request handling (guard, headers, routes) "
                "about 8 %; counted in instructions (callgrind), about 6,000 of the ~54,000 the gateway's thread "
                "executes per proxied request, the rest hyper's server and client, the upstream pool and the "
                "runtime: [the levers](#the-gateways-levers-same-run-issue-35-item-6).")
        latency_why = (
            f"nginx adds {ng_added:+.2f} ms. Queueing for a core on a shared machine (load average "
            f"{g.get('loadavg_at_start', 0):.1f} on 2 cores at the start) weighs on every p99 here, and on the "
            "proxy that needs the most CPU per request the most.")
        if "gateway_unguarded_fixed" in g:
            un_added = p99(g["gateway_unguarded_fixed"]) - p99(up_fix)
            share = rate * cpu_us("gateway") / 1e6 * 100
            latency_why = (
                f"The same run's gateway without the pass check adds {un_added:+.2f} ms"
                f"{' (within the goal)' if un_added <= 1 else ''}, nginx {ng_added:+.2f} ms: the excess comes "
                f"with the proxy's CPU per request, {cpu_us('gateway'):.0f} µs on the gateway's one thread "
                f"(about {share:.0f} % of it at this rate; {cpu_us('gateway_unguarded'):.0f} µs without the pass "
                "check), so requests arriving together queue for it, the more so when other work takes the core "
                f"(load average {g.get('loadavg_at_start', 0):.1f} on 2 cores at the start). "
                "Next lever: the same as for throughput.")
        kib = mem["gateway"]["kib_per_connection"]
        marginal = mem["gateway"].get("marginal_kib_per_connection")
        kib_measured = f"{kib:.1f} KiB over the first {mem['gateway']['connections']:,}" + (
            f", {marginal:.1f} KiB each for the next {mem['gateway']['connections']:,}"
            if marginal is not None else "") + f" (nginx {mem['nginx']['kib_per_connection']:.1f})"
        kib_why = (
            "The first figure spreads the process's one-off growth (the allocator's and the runtime's "
            "first slabs, 10–16 MB) over the connections; judged on it, as the bench always has, the goal "
            "is not met" + (f", though each further connection costs {marginal:.1f} KiB" if marginal is not None
                            else "") + " ([the lever history](#the-gateways-levers-same-run-issue-35-item-6)).")
        rows = [
            ("gateway ≥ 0.8 × nginx's throughput (issue 35; issue 14 asked 0.7 ×)",
             f"{gw / ng:.3f} × ({fmt(gw)} against {fmt(ng)}/s)", gw >= 0.8 * ng, throughput_why),
            ("≤ 8 KiB per idle proxied connection (issue 35)", kib_measured, kib <= 8, kib_why),
            (f"≤ 1 ms added p99 at {rate:,} requests/s (issue 14)", f"{added:+.2f} ms over the upstream alone "
             f"(nginx: {ng_added:+.2f} ms)", added <= 1 and fixed_ok,
             latency_why if fixed_ok else f"the rate of {rate:,}/s was not held without errors"),
        ]
        if p99(up_fix) > 10:
            # The upstream alone stalled: nothing can be said about what a proxy adds.
            rows[2] = (rows[2][0], rows[2][1], None,
                       f"Undecided: the ceiling itself stalled in this run (the upstream alone: p99 "
                       f"{p99(up_fix):.2f} ms at {rate:,}/s), other work took the machine; run it again.")
        lines += ["", "| goal | measured | met | why not |", "|---|---|---|---|"]
        for name, got, ok, why in rows:
            met = "undecided" if ok is None else "yes" if ok else "**no**"
            lines.append(f"| {name} | {got} | {met} | {'' if ok else why} |")
    lines += ["", "Its commands (the pass replaced by `<pass>`):", "", "```"] + g.get("commands", []) + ["```"]
    return lines


DROP_TITLE = "## A launch-day drop"


def drop_section(r):
    """The drop from one run of `scenarios.drop`: the shuffle, the first pushes and
    Redis's longest command, each beside the same run's ceiling, and the command."""
    d = r["drop"]
    g = d["loadgen"]

    def ms(x):
        return "–" if x is None else f"{fmt(x)} ms"

    def longest(x):
        return "–" if not x else f"{fmt(x['us'])} µs (`{x['command']}`, {fmt(x['logged'])} commands logged)"

    cmds = [c for c in r.get("commands", []) if " drop " in f" {c} "]
    lines = [
        "",
        DROP_TITLE,
        "",
        f"Generated by `python3 bench/run.py --only drop --drop-visitors {d['visitors']}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} ({r['profile']} build), "
        f"{r['machine'].get('cpu', '')}. One instance on Redis, capacity 100; "
        f"{fmt(g['joined'])} visitors joined the pre-queue in {g['join_seconds']:.1f} s "
        f"({fmt(g['prequeued'])} answered `prequeue`; the fairness record counted {fmt(g['prequeue_count'])}), "
        f"{fmt(g['watchers_opened'])} of them held the queue WebSocket; the room opened "
        f"{fmt(g['margin_ms'])} ms after the last join. Times are from `opens_at`.",
        "",
        "| measure | figure | same-run ceiling |",
        "|---|---|---|",
        f"| time to shuffle (`opens_at` → seed revealed, read every 5 ms) | **{ms(g['shuffle_ms'])}** | "
        f"{g['shuffle_arithmetic_ms']:.1f} ms: HMAC-SHA256 of every id and the sort, in one process |",
        f"| first push out of the pre-queue (a watcher's `status`/`admitted`) | **{ms(g['first_push_ms'])}** | "
        f"{g['ws_round_trip']['p50_ms']:.2f} ms: the socket's own round trip (ping → pong, p50) |",
        f"| every watcher's first push: p50 / p99 / max | {g['push']['p50_ms']:.0f} / {g['push']['p99_ms']:.0f} / "
        f"{g['push']['max_ms']:.0f} ms ({fmt(g['push']['count'])} watchers) | |",
        f"| first `admitted` frame on a watcher | {ms(g['first_admitted_ms'])} ({fmt(g['admitted_watchers'])} watchers admitted) | |",
        f"| Redis's longest command during the opening | **{longest(d['redis_longest_opening'])}** | "
        f"{longest(d['redis_longest_joins'])} during the joins before it |",
        "",
        f"Errors: {json.dumps(g['join_errors']) if g['join_errors'] else 'none'}; queued after: {fmt(d['queued_after'])}.",
    ]
    if cmds:
        lines += ["", "```"] + cmds + ["```"]
    return lines


# The sections a `--only` run rewrites: results key → (title, lines).
MEMORY_HTTP_TITLE = "## Memory store over HTTP: stalls"


def memory_http_section(r):
    """`--only memory`: join + status over HTTP on the memory store, each round beside the
    trivial-HTTP ceiling measured just before it."""
    lines = [
        "",
        MEMORY_HTTP_TITLE,
        "",
        f"`python3 bench/run.py --only memory` on {r['machine']['cpu']} × {r['machine']['cores']} "
        "cores (shared with other builds while it ran: the figures are noisy). One instance on the "
        "memory store (`workers = 1`, capacity 1,000, a fresh instance per round), 64 connections "
        "of join + status; the ceiling is `anteroom-loadtest get` against the trivial server, "
        "measured just before each round. Issue 35's targets: p99 ≤ 5 × p50, and join + status at "
        "least the rate of the in-process single-node prototype under the same load in the same "
        "round (`anteroom-loadtest prototype-server`: our rendering of that design, a `BTreeMap` "
        "behind a mutex, one actix-web worker, no signatures, no heartbeats, no ETA, nobody "
        "leaving, position read in O(1): loadtest/src/prototype.rs).",
        "",
        "Server CPU µs per request: the server process's CPU over the run (/proc) divided by its "
        "requests; it moves less with the machine's moment than the rate does.",
        "",
        "| round | requests/s | × ceiling | p50 ms | p99 ms | max ms | p99 / p50 | errors | CPU µs / request | prototype requests/s | prototype CPU µs / request | Anteroom ÷ prototype (rate) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cpu_us(run):
        servers = run.get("servers") or []
        if not servers or not run["requests_per_s"]:
            return "–"
        return f"{servers[0]['cpu_percent'] * 1e4 / run['requests_per_s']:.1f}"

    for x in r["memory_http"]:
        js, c = x["join_status"], x["ceiling"]
        lat = js["latency"]
        p = x.get("prototype")
        proto = (f"{fmt(p['requests_per_s'])} | {cpu_us(p)} | {js['requests_per_s'] / max(p['requests_per_s'], 1e-9):.2f}"
                 if p else "– | – | –")
        lines.append(
            f"| {x['round']} | {fmt(js['requests_per_s'])} | {js['requests_per_s'] / c['requests_per_s']:.2f} | "
            f"{lat['p50_ms']:.2f} | {lat['p99_ms']:.2f} | {lat['max_ms']:.1f} | "
            f"{lat['p99_ms'] / max(lat['p50_ms'], 1e-9):.1f} | {sum(js['errors'].values())} | {cpu_us(js)} | {proto} |")
    return lines


PEERS_TITLE = "## Against the Redis-backed peers (same run)"

# What each system guarantees, from reading its code (not measured).
PEER_NOTES = {
    "Anteroom": ("Redis", "yes"),
    "simple-waiting-system": ("Redis", "no (ms-timestamp scores: joins in the same ms tie; no capacity)"),
    "nextjs-waiting-room": ("Redis", "yes (ticket sequence; admission in tryAdmit's script)"),
}


def peers_section(r):
    """`--only peers`: Anteroom and the two Redis-backed peers under the same wrk load, in
    interleaved rounds, medians, beside the trivial-HTTP ceiling of the same rounds."""
    p, m = r["peers"], r["machine"]
    med = p["medians"]

    lines = [
        "",
        PEERS_TITLE,
        "",
        f"`bash bench/peers/build.sh && python3 bench/run.py --only peers` on {m['cpu']} × "
        f"{m['cores']} cores, {m['memory_gib']} GiB (release build; {m['redis']}; node "
        f"{r.get('node', '?')}). **This machine is shared with other engineers' builds while "
        f"it runs** (1-minute load average {p['loadavg_after']} at the end): every system meets the "
        "same noise, in turn, round after round, but the absolute figures move between runs. "
        f"{p['rounds']} interleaved rounds (the order turns each round) of `wrk -t2 -c64 "
        f"-d{p['duration_s']}s` per system and endpoint, with `bench/peers/request.lua`; medians, "
        "the rounds' range in brackets. Each system on its own `redis-server`, one process, its "
        "defaults, rate limits off for the one client address (Anteroom: `workers = 1`, "
        "`[rate_limit]` 0, `max_places_per_ip = 0`, heartbeat and session 1 h so that the "
        "status visitors stay queued between rounds). Capacity 100 in Anteroom and "
        "nextjs-waiting-room (its default); simple-waiting-system has none. *Join*: each request a "
        "new visitor (Anteroom `POST /api/rooms/bench/join`; simple-waiting-system `POST "
        "/waiting/add`; nextjs-waiting-room `GET /api/waiting-room/status` with a new `__wr_id` "
        "cookie, which queues it). *Status*: 1,000 visitors queued before the first round, asked "
        "in turn (Anteroom `GET /api/rooms/bench/status` with the visitor token; "
        "`GET /waiting/check?userId=`; the status route with the visitor's cookie). Peers "
        f"built from their public sources by `bench/peers/build.sh` (simple-waiting-system at "
        f"`{p['commits'].get('simple-waiting-system', '?')[:12]}`, no license stated; "
        f"nextjs-waiting-room at `{p['commits'].get('nextjs-waiting-room', '?')[:12]}`, MIT; "
        "its two local patches are in the script). CPU: the server process (and its children) "
        "and its Redis, % of one core over the run, from /proc. Errors: wrk's socket errors, "
        "timeouts (no answer within its 2 s) and answers ≥ 400, over all rounds.",
        "",
        "| system | store | join/s | status/s | join p99 ms | status p99 ms | server CPU % (join / status) | Redis CPU % (join / status) | errors | FIFO and capacity exact |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    c = med["ceiling/get"]
    names = ["Anteroom", "simple-waiting-system", "nextjs-waiting-room"]
    for name in names:
        j, s = med.get(f"{name}/join"), med.get(f"{name}/status")
        if not j:
            continue
        store, exact = PEER_NOTES[name]
        lines.append(
            f"| {'**' + name + '**' if name == 'Anteroom' else name} | {store} | {median_range(j['requests_per_s'])} | "
            f"{median_range(s['requests_per_s'])} | {j['p99_ms']['median']:.1f} | {s['p99_ms']['median']:.1f} | "
            f"{j['server_cpu_pct']['median']:.0f} / {s['server_cpu_pct']['median']:.0f} | "
            f"{j['redis_cpu_pct']['median']:.0f} / {s['redis_cpu_pct']['median']:.0f} | "
            f"{j['errors'] + s['errors']} | {exact} |")
    lines.append(
        f"| ceiling: one trivial actix-web handler (`GET /`), same wrk | – | {median_range(c['requests_per_s'])} | | "
        f"{c['p99_ms']['median']:.1f} | | {c['server_cpu_pct']['median']:.0f} | – | {c['errors']} | – |")
    lines += ["", "| issue 35 item 4 target | measured (medians) | met |", "|---|---|---|"]
    a = {op: med["Anteroom/" + op]["requests_per_s"]["median"] for op in ("join", "status")}
    for op, want in (("join", 10), ("status", 15)):
        best_name, best = max(((n, med[f"{n}/{op}"]["requests_per_s"]["median"]) for n in names[1:]
                               if f"{n}/{op}" in med), key=lambda t: t[1])
        ratio = a[op] / best if best else float("inf")
        lines.append(f"| {op} ≥ {want} × the best Redis-backed peer | {ratio:.1f} × ({fmt(a[op])} against "
                     f"{best_name}'s {fmt(best)}/s) | {'yes' if ratio >= want else '**no**'} |")
    return lines


JOIN_COST_TITLE = "## CPU per join, queued and admitted"


def join_cost_section(r):
    """`--only joincost`: Redis's and Anteroom's CPU per queued and per admitted join."""
    j, m = r["join_cost"], r["machine"]
    md = j["medians"]

    lines = [
        "",
        JOIN_COST_TITLE,
        "",
        f"`python3 bench/run.py --only joincost` on {m['cpu']} × {m['cores']} cores (release build). "
        "**Shared with other engineers' builds while it ran** (1-minute load average "
        f"{j['loadavg_after']} at the end). One instance (`workers = 1`; every default feature on, "
        "the request limits and the per-address cap off for the one client address) on its own "
        f"Redis, a fresh pair per run; `wrk -t2 -c64 -d{j['duration_s']}s` of joins only, each a new "
        "visitor. Queued: capacity 1, its slot held. Admitted: capacity 10,000,000. "
        f"{j['rounds']} rounds alternating the two; medians (the rounds' range). Redis CPU: the whole "
        "process, user + system (`INFO cpu`), from `CONFIG RESETSTAT` to the end, per join (it "
        "includes the instance's background calls of those seconds: hub ticks, ETA reads, the "
        "revocation log); script time: `INFO commandstats`' EVALSHA and FCALL µs per join. "
        "Anteroom CPU: the instance process (/proc) per join. Ceiling: Redis's CPU per call of "
        f"`EVALSHA` of `return 1` under redis-benchmark in the same run: {median_range(j['trivial_script_us'], 2)} µs.",
        "",
        "| joins | joins/s | p99 ms | Redis CPU µs / join | Redis script µs / join | Anteroom CPU µs / join | Anteroom CPU % | Redis CPU % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode in ("queued", "admitted"):
        x = md[mode]
        lines.append(
            f"| {mode} | {median_range(x['joins_per_s'], 0)} | {x['p99_ms']['median']:.1f} | {median_range(x['redis_cpu_us'], 1)} | "
            f"{median_range(x['redis_script_us'], 1)} | {median_range(x['anteroom_cpu_us'], 1)} | {x['anteroom_cpu_pct']['median']:.0f} | "
            f"{x['redis_cpu_pct']['median']:.0f} |")
    lines += ["", "| issue 35 item 2 target | measured (median) | met |", "|---|---|---|"]
    for what, v, want in (("Redis CPU per queued join ≤ 15 µs", md["queued"]["redis_cpu_us"]["median"], 15),
                          ("Redis CPU per admitted join ≤ 20 µs", md["admitted"]["redis_cpu_us"]["median"], 20),
                          ("Anteroom CPU per admitted join ≤ 40 µs", md["admitted"]["anteroom_cpu_us"]["median"], 40)):
        lines.append(f"| {what} | {v:.1f} µs | {'yes' if v <= want else '**no**'} |")
    return lines


SECTIONS = {"gateway": (GATEWAY_TITLE, gateway_section), "drop": (DROP_TITLE, drop_section),
            "join_cost": (JOIN_COST_TITLE, join_cost_section),
            "memory_http": (MEMORY_HTTP_TITLE, memory_http_section),
            "peers": (PEERS_TITLE, peers_section)}


def replace_section(r, path):
    """Writes the section of an `--only` run (the gateway's or the drop's) into the report
    at `path` in place of its old one (or before the Targets, else before the Commands),
    leaving the rest as it was."""
    try:
        old = open(path).read().rstrip("\n").split("\n")
    except OSError:
        old = ["# Benchmarks"]
    key = next(k for k in SECTIONS if k in r)
    title, section = SECTIONS[key]
    new = section(r)[1:]  # without its leading blank line
    start = next((i for i, l in enumerate(old) if l == title), None)
    if start is not None:
        end = next((i for i in range(start + 1, len(old)) if old[i].startswith("## ")), len(old))
        while end > start and old[end - 1] == "":
            end -= 1
    else:
        start = next((i for i, l in enumerate(old) if l in ("## Targets", "## Commands")), len(old))
        end = start
        new = new + [""]
    with open(path, "w") as f:
        f.write("\n".join(old[:start] + new + old[end:]) + "\n")


# The sections a full run writes itself; every other section of the old report (the drop's,
# the ETA's, the device kit's, what each change cost...) was written by another run or by
# hand and is carried over as it is.
WRITTEN = ("## Machine", "## Ceilings (same run)", "## Join + status decisions (Redis store)",
           "## Memory store", "## WebSocket crowd on two instances sharing one Redis",
           "## Redis Cluster (three masters on this machine)", "## Concurrent queue WebSockets",
           "## A room with 1,000,000 queued visitors", GATEWAY_TITLE, "## Targets", "## Commands")


def kept_sections(path):
    """The sections of the existing report a full run does not write, as lines (each up to the next '## ')."""
    try:
        old = open(path).read().split("\n")
    except OSError:
        return []
    out, keep = [], False
    for line in old:
        if line.startswith("## "):
            # One blank line between sections, however many the old report had.
            while out and out[-1] == "":
                out.pop()
            keep = line.strip() not in WRITTEN
            if keep:
                out.append("")
        if keep:
            out.append(line)
    while out and out[-1] == "":
        out.pop()
    return out


def write_report(r, path):
    m = r["machine"]
    js = r["join_status_max"]
    ceil_r = r["redis_evalsha_ceiling"]
    ceil_h = r["http_ceiling"]["requests_per_s"]
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `python3 bench/run.py{' --smoke' if r['smoke'] else ''}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} ({r['profile']} build). "
        "Redis, Anteroom and the load generator share this machine; every figure stands "
        "beside a ceiling measured in the same run. The sections after the Targets come from other "
        "runs and name their own command and date. One current table per measure: older figures "
        "are in this file's git history.",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']} × {m['cores']} cores, {m['memory_gib']} GiB",
        f"- Kernel {m['kernel']}; {m['redis']}; {m['rustc']}; fd hard limit {m['fd_hard_limit']}",
        "",
        "## Ceilings (same run)",
        "",
        "| what | requests/s |",
        "|---|---|",
        f"| Redis: `EVALSHA` of `return 1`, 50 clients (redis-benchmark) | {fmt(ceil_r)} |",
        f"| HTTP: one trivial actix-web handler, 64 connections | {fmt(ceil_h)} |",
        "",
        "## Join + status decisions (Redis store)",
        "",
        "| scenario | requests/s | p50 ms | p99 ms | max ms | errors | Anteroom CPU % | Redis CPU % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, label in [("join_status_max", "closed loop, 64 connections"), ("join_status_5k", "open loop, 5,000 requests/s scheduled")]:
        x = r[key]
        srv = x.get("servers", [{}, {}])
        lines.append(f"| {label} | {fmt(x['requests_per_s'])} | {x['latency']['p50_ms']:.2f} | {x['latency']['p99_ms']:.2f} | "
                     f"{x['latency']['max_ms']:.1f} | {sum(x['errors'].values())} | {fmt(srv[0].get('cpu_percent'))} | {fmt(srv[1].get('cpu_percent') if len(srv) > 1 else None)} |")
    lines += [
        "",
        f"Join+status at full speed is **{js['requests_per_s'] / ceil_r:.2f} ×** the Redis EVALSHA ceiling "
        f"and **{js['requests_per_s'] / ceil_h:.2f} ×** the trivial-HTTP ceiling of this run.",
        "",
    ]
    rc = r.get("join_status_redis")
    if rc:
        lines += [
            f"Redis time per decision in the closed loop (`INFO commandstats`, reset before it; "
            f"script time, which includes the commands a script calls): "
            f"**{rc['usec_per_decision']:.1f} µs** per join or status, "
            f"{rc['calls_per_script']:.1f} `redis.call`s per script run "
            f"({fmt(rc['evalsha_calls'])} script runs for {fmt(rc['decisions'])} decisions).",
            "",
        ]
    lines += [
        "## Memory store",
        "",
        f"- join + status without HTTP: **{fmt(r['memstore']['decisions_per_s'])} decisions/s** "
        f"(2 tasks, queue grew to {fmt(r['memstore']['queue_length_at_end'])}).",
        "",
        "## WebSocket crowd on two instances sharing one Redis",
        "",
        "Visitors arrive at a steady rate on both instances, hold the queue socket, release "
        "after a think time once admitted; 10 % leave silently. Push latency runs from the "
        "store's admission time to the `admitted` frame arriving.",
        "",
        "| instance | visitors | sockets | admitted | released | abandoned | push p50 ms | push p99 ms | push max ms | longest silence p99 ms | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, o in enumerate(r["ws_two_instances"]):
        lines.append(f"| {'AB'[i]} | {o['visitors_started']} | {o['sockets_opened']} | {o['admitted']} | {o['released']} | {o['abandoned']} | "
                     f"{o['push_latency']['p50_ms']:.1f} | {o['push_latency']['p99_ms']:.1f} | {o['push_latency']['max_ms']:.1f} | "
                     f"{fmt(o['longest_silence_p99_ms'])} | {sum(o['errors'].values())} |")
    if "cluster" in r:
        c = r["cluster"]
        total = sum(m["requests_per_s"] for m in c["rooms_on_shards"].values())
        lines += [
            "",
            "## Redis Cluster (three masters on this machine)",
            "",
            f"One room lives on one shard (see the [Redis key layout]({KEY_LAYOUT})); rooms spread over shards.",
            "",
            "| scenario | requests/s | p99 ms |",
            "|---|---|---|",
            f"| one room (one shard does the work), 64 connections | {fmt(c['one_room']['requests_per_s'])} | {c['one_room']['latency']['p99_ms']:.2f} |",
        ]
        for rid, m in c["rooms_on_shards"].items():
            lines.append(f"| room `{rid}` on its own shard, 22 connections, at the same time as the others | {fmt(m['requests_per_s'])} | {m['latency']['p99_ms']:.2f} |")
        lines.append(f"| three rooms on three shards together | **{fmt(total)}** | |")
    if "sockets" in r:
        s = r["sockets"]
        opened = [o["sockets_opened"] for o in s["loadgen"]]
        peak = [o["peak_open_sockets"] for o in s["loadgen"]]
        per_inst = [peak[0] + peak[1], peak[2] + peak[3], peak[4] + peak[5]]
        mem = [((s["rss_peak_mb"][i] or 0) - (s["rss_before_mb"][i] or 0)) * 1024 / max(per_inst[i], 1) for i in range(3)]
        sil = silences(s["loadgen"])
        errs = {}
        for o in s["loadgen"]:
            for k, v in o["errors"].items():
                errs[k] = errs.get(k, 0) + v
        lines += [
            "",
            "## Concurrent queue WebSockets",
            "",
            f"Three instances sharing one Redis (one process may hold 20,000 descriptors here), six load-generator "
            f"processes bound to distinct loopback source addresses. Target {sum(s['shares']):,} sockets.",
            "",
            f"- sockets opened: **{sum(opened):,}**, open at once per instance: {', '.join(f'{p:,}' for p in per_inst)}",
            f"- memory per socket (RSS growth / sockets): {', '.join(f'{x:.1f} KiB' for x in mem)}",
            f"- longest silence any waiting socket saw: p99 {fmt(sil['p99'])} ms, max {fmt(sil['max'])} ms (target: updated at least every 5 s); "
            f"once the crowd was in (5 s after each load generator's last arrival): p99 {fmt(sil['steady_p99'])} ms, max {fmt(sil['steady_max'])} ms",
            f"- Redis CPU at the plateau: **{s['redis_cpu_percent']:.1f} %** of one core",
            f"- errors: {json.dumps(errs) if errs else 'none'}",
            "",
            "Issue 35 item 5 (one million waiting sockets in one room, on the 16-core device machine) "
            "was not lent a device machine: this is its fallback, the largest crowd of waiting sockets "
            "measured on this 2-core machine (the item stays open).",
        ]
    if "million" in r:
        mm = r["million"]
        lines += [
            "",
            "## A room with 1,000,000 queued visitors",
            "",
            f"- Redis memory per queued visitor: **{fmt(mm['mem_per_visitor_bytes'])} bytes** (what a join writes for a waiting visitor; see the [Redis key layout]({KEY_LAYOUT}))",
            f"- join + status at 2,000 requests/s against it: p50 {mm['latency_2k']['latency']['p50_ms']:.2f} ms, "
            f"**p99 {mm['latency_2k']['latency']['p99_ms']:.2f} ms**, max {mm['latency_2k']['latency']['max_ms']:.1f} ms",
            f"- reaper dropping all 1M stale heartbeats in batches of 1,000: {mm['reaper']['seconds']} s, "
            f"longest single Redis command **{fmt(mm['reaper']['max_command_us'])} µs**, longest script {fmt(mm['reaper']['max_script_us'])} µs "
            f"(SLOWLOG of every command, {mm['reaper']['commands_logged']} logged); {mm['reaper']['left']} left",
        ]
    if "gateway" in r:
        lines += gateway_section(r)
    lines += targets_section(r)
    lines += kept_sections(path)
    lines += ["", "## Commands", "", "```"] + r.get("commands", COMMANDS) + ["```", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))

