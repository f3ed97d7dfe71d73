"""Process control for the benchmark suite: starting and stopping processes (every one is
registered in PROCS and its command line in COMMANDS), free ports, waiting for HTTP, the
load-generator runner, machine facts, rss/cpu sampling from /proc, a small RESP client
(INFO, SCRIPT LOAD, CLUSTER …), Redis through `anteroom-loadtest redis`, and the `Stack`
of one Redis plus Anteroom instances.
"""

import json
import os
import platform
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGNING_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
PROCS = []
COMMANDS = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, env=None, log=None, cwd=None):
    COMMANDS.append((f"(cd {shlex.quote(cwd)} && " if cwd else "") + shlex.join(cmd) + (")" if cwd else ""))
    p = subprocess.Popen(cmd, env={**os.environ, **(env or {})}, cwd=cwd,
                         stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT)
    PROCS.append(p)
    return p


def stop(p, timeout=10):
    """SIGTERM one process we started, wait for it (SIGKILL after `timeout`), forget it."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if p in PROCS:
        PROCS.remove(p)


def stop_all():
    for p in PROCS:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in PROCS:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


def wait_http(url, deadline=30):
    end = time.time() + deadline
    while time.time() < end:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


def loadtest(binary, *args, timeout=600):
    """Run the load generator to the end; its last stdout line is the JSON result."""
    cmd = [binary, *[str(a) for a in args]]
    COMMANDS.append(shlex.join(cmd))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise SystemExit(f"loadtest failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def spawn_loadtest(binary, *args):
    """Start the load generator in the background (several at once); see `loadtest_result`."""
    cmd = [binary, *[str(a) for a in args]]
    COMMANDS.append(shlex.join(cmd))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def loadtest_result(p, timeout):
    """Wait for a `spawn_loadtest` process; its last stdout line is the JSON result."""
    out, _ = p.communicate(timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    redis_v = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.strip()
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip() if shutil.which("rustc") else "rustc ?"
    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1),
        "kernel": platform.release(), "redis": redis_v, "rustc": rustc,
        "fd_hard_limit": subprocess.run(["bash", "-c", "ulimit -Hn"], capture_output=True, text=True).stdout.strip(),
    }


def rss(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None


def children(pid):
    """The pids of a process's children (nginx's workers under its master)."""
    try:
        return [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []


def cpu_over(pid, secs):
    def ticks():
        f = open(f"/proc/{pid}/stat").read()
        rest = f[f.rfind(")") + 2:].split()
        return int(rest[11]) + int(rest[12])
    a = ticks()
    time.sleep(secs)
    return (ticks() - a) / 100 / secs * 100


def resp(port, *args):
    """One Redis command over a raw socket (RESP2), with the reply parsed."""
    with socket.create_connection(("127.0.0.1", port)) as c:
        out = f"*{len(args)}\r\n".encode()
        for a in args:
            b = str(a).encode()
            out += f"${len(b)}\r\n".encode() + b + b"\r\n"
        c.sendall(out)
        f = c.makefile("rb")

        def read():
            line = f.readline().rstrip(b"\r\n")
            t, rest = line[:1], line[1:]
            if t == b"+":
                return rest.decode()
            if t == b"-":
                raise RuntimeError(rest.decode())
            if t == b":":
                return int(rest)
            if t == b"$":
                n = int(rest)
                if n < 0:
                    return None
                data = f.read(n + 2)[:-2]
                return data.decode(errors="replace")
            if t == b"*":
                n = int(rest)
                return None if n < 0 else [read() for _ in range(n)]
            raise RuntimeError(f"bad reply {line!r}")
        return read()


def commandstats(port):
    """`INFO commandstats` as {command: (calls, usec)}."""
    out = {}
    for m in re.finditer(r"cmdstat_([\w|]+):calls=(\d+),usec=(\d+)", resp(port, "INFO", "commandstats")):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def silences(loadgen):
    """The longest silences of a socket scenario's load generators (`ws` results), in ms,
    worst over the processes: `p99` and `max` over the run, `steady_p99` and `steady_max`
    once the crowd is in (0 where a result predates them)."""
    worst = lambda k: max(o.get(k, 0) for o in loadgen)  # noqa: E731
    return {"p99": worst("longest_silence_p99_ms"), "max": worst("longest_silence_max_ms"),
            "steady_p99": worst("steady_silence_p99_ms"), "steady_max": worst("steady_silence_max_ms")}


# Redis's CPU seconds (INFO cpu) when its statistics were last reset (reset_stats).
_CPU_AT_RESET = {}


def redis_cpu_s(port):
    """Redis's CPU time so far, user + system, in seconds (`INFO cpu`)."""
    info = resp(port, "INFO", "cpu")
    return sum(float(re.search(rf"{k}:([\d.]+)", info).group(1))
               for k in ("used_cpu_sys", "used_cpu_user"))


def reset_stats(port):
    """`CONFIG RESETSTAT`, noting Redis's CPU time then for redis_cost."""
    resp(port, "CONFIG", "RESETSTAT")
    _CPU_AT_RESET[port] = redis_cpu_s(port)


def redis_cost(port, decisions):
    """Redis time per decision from `INFO commandstats` (reset before the run): the
    scripts' own time (FCALL and EVALSHA usec, which include the commands they call) per decision,
    and the commands the scripts called per script run and per decision; and Redis's whole
    CPU time per decision (`INFO cpu`) when the run began with reset_stats."""
    st = commandstats(port)
    scripts = ("evalsha", "fcall")
    ev_calls = sum(st.get(k, (0, 0))[0] for k in scripts)
    ev_usec = sum(st.get(k, (0, 0))[1] for k in scripts)
    inner = sum(c for k, (c, _) in st.items()
                if k not in scripts + ("info", "config|resetstat", "ping", "function|load"))
    return {
        "decisions": decisions,
        "evalsha_calls": ev_calls,
        "usec_per_decision": ev_usec / decisions if decisions else 0.0,
        "usec_per_script": ev_usec / ev_calls if ev_calls else 0.0,
        "calls_per_script": inner / ev_calls if ev_calls else 0.0,
        # Joins taken together make one script carry many decisions: per decision too.
        "scripts_per_decision": ev_calls / decisions if decisions else 0.0,
        "calls_per_decision": inner / decisions if decisions else 0.0,
        # Everything Redis spent (commands outside scripts, reading and writing the
        # connections) since reset_stats, per decision; None without reset_stats.
        "cpu_usec_per_decision": ((redis_cpu_s(port) - _CPU_AT_RESET[port]) * 1e6 / decisions
                                  if decisions and port in _CPU_AT_RESET else None),
    }


def used_memory(port):
    return int(re.search(r"used_memory:(\d+)", resp(port, "INFO", "memory")).group(1))


class Redis:
    """Redis servers held by one `anteroom-loadtest redis` process: `.ports`, `.pids` (the
    redis-server processes, for CPU sampling) and `.close()`."""

    def __init__(self, proc, ports, pids):
        self.proc = proc
        self.ports = ports
        self.pids = pids

    def close(self, timeout=10):
        """Close the launcher's stdin (it then stops its servers and removes their
        directories); SIGTERM, then SIGKILL, if it takes longer than `timeout`."""
        p = self.proc
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop(p, timeout)
        if p in PROCS:
            PROCS.remove(p)


def start_redis(lt_binary, cluster=False, maxclients=None, deadline=30):
    """Start Redis through the load generator's launcher (`anteroom-loadtest redis`): one
    `redis-server` on a free loopback port without persistence, or with `cluster` three
    joined cluster masters. Waits (up to `deadline` seconds) for its one JSON line
    `{"ports": [...], "pids": [...]}`; the launcher keeps the servers until its stdin is
    closed or it gets SIGTERM, so `stop_all()` stops it too."""
    cmd = [lt_binary, "redis"]
    if cluster:
        cmd.append("--cluster")
    if maxclients is not None:
        cmd += ["--maxclients", str(maxclients)]
    COMMANDS.append(shlex.join(cmd))
    err = tempfile.TemporaryFile()  # not a pipe: nothing to drain, read on failure
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
    PROCS.append(p)
    fd = p.stdout.fileno()

    def fail(why):
        try:
            p.stdin.close()
        except OSError:
            pass
        stop(p, 5)
        err.seek(0)
        stderr = err.read().decode(errors="replace").strip()
        raise SystemExit(f"Redis did not start: `{' '.join(cmd)}` {why}"
                         + (f"\n--- its stderr ---\n{stderr}" if stderr else " (nothing on stderr)"))

    end = time.monotonic() + deadline
    buf = b""
    skipped = []
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace").strip()
            try:
                ready = json.loads(text)
            except ValueError:
                ready = None
            if isinstance(ready, dict) and "ports" in ready and "pids" in ready:
                ports, pids = [int(x) for x in ready["ports"]], [int(x) for x in ready["pids"]]
                if not ports or len(ports) != len(pids) or len(ports) != (3 if cluster else 1):
                    fail(f"reported {text!r}: expected {3 if cluster else 1} port(s) and as many pids")
                # Keep reading whatever else it (or a child) writes to stdout, so that
                # nothing ever blocks on a full pipe.
                threading.Thread(target=_drain, args=(fd,), daemon=True).start()
                return Redis(p, ports, pids)
            if text:
                skipped.append(text)
        left = end - time.monotonic()
        if left <= 0:
            fail(f"printed no ready line within {deadline} s"
                 + (f" (stdout: {' | '.join(skipped)[-500:]!r})" if skipped else ""))
        ready_fds, _, _ = select.select([fd], [], [], left)
        if not ready_fds:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            try:
                status = p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = "?"
            fail(f"closed stdout before its ready line (exit status {status})"
                 + (f" (stdout: {' | '.join(skipped)[-500:]!r})" if skipped else ""))
        buf += chunk


def _drain(fd):
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


class Stack:
    """A Redis and some Anteroom instances with one shared key prefix."""

    def __init__(self, bin_dir, tmp, instances=1, capacity=1000, ttl=60, hb=120, extra_env=None,
                 room_extra="", extra_toml="", workers=1):
        self.redis = start_redis(os.path.join(bin_dir, "anteroom-loadtest"), maxclients=60000)
        self.redis_port = self.redis.ports[0]
        self.redis_pid = self.redis.pids[0]
        self.ports = []
        self.pids = []
        for i in range(instances):
            port = free_port()
            cfg = os.path.join(tmp, f"anteroom-{self.redis_port}-{i}.toml")
            with open(cfg, "w") as f:
                f.write(f"""
listen = "127.0.0.1:{port}"
redis_url = "redis://127.0.0.1:{self.redis_port}"
key_prefix = "bench"
secret_key = "bench-secret"
signing_key = "{SIGNING_KEY}"
demo = false
# One HTTP worker unless asked: Redis and the load generator share this machine's cores
# (measured: 1 worker gave ~15,000 join+status/s against ~11,600 with 2 here).
workers = {workers}
[admin]
enabled = false
[rate_limit]
visitor_requests = 0
ip_per_second = 0
[store]
response_timeout_ms = 5000
[[rooms]]
id = "bench"
capacity = {capacity}
session_ttl_secs = {ttl}
heartbeat_timeout_secs = {hb}
target_url = "http://127.0.0.1:{port}/"
# The load generator joins every visitor from one address: no cap per address.
max_places_per_ip = 0
{room_extra}
{extra_toml}
""")
            log = open(os.path.join(tmp, f"anteroom-{port}.log"), "w")
            p = start([os.path.join(bin_dir, "anteroom"), "--config", cfg],
                      env={"ANTEROOM_LOG": "warn", **(extra_env or {})}, log=log)
            wait_http(f"http://127.0.0.1:{port}/readyz")
            self.ports.append(port)
            self.pids.append(p.pid)

    def url(self, i=0):
        return f"http://127.0.0.1:{self.ports[i]}"

    def close(self):
        for p in list(PROCS):
            if p.pid in self.pids:
                stop(p)
        self.redis.close()
