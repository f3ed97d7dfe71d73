#!/usr/bin/env bash
# Heap bytes per open queue socket, from heaptrack (deterministic: allocation sizes, not
# timings). Starts a Redis and one Anteroom instance under heaptrack, holds the room's one
# slot, opens N queue sockets with the load generator (nobody is admitted, so all N stay
# open), stops the instance while they are open and prints heaptrack's peak heap and its
# biggest peak consumers. Run it with N=0 and N=2000 and divide the difference by 2000.
#
#   cargo build --features heap-profile   # the system allocator: heaptrack sees it
#   BIN=/path/to/target/debug N=2000 bench/heap_sockets.sh
set -euo pipefail
BIN=${BIN:-target/debug}
N=${N:-2000}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
RP=$((20000 + RANDOM % 10000))
AP=$((30000 + RANDOM % 10000))
redis-server --port "$RP" --save '' --appendonly no --daemonize yes --pidfile "$OUT/redis.pid" >/dev/null
trap 'kill "$(cat "$OUT/redis.pid")" 2>/dev/null || true' EXIT
cat >"$OUT/a.toml" <<TOML
listen = "127.0.0.1:$AP"
redis_url = "redis://127.0.0.1:$RP"
key_prefix = "heap"
secret_key = "heap-secret"
demo = false
workers = 1
[admin]
enabled = false
[rate_limit]
visitor_requests = 0
ip_per_second = 0
[[rooms]]
id = "bench"
capacity = 1
session_ttl_secs = 3600
heartbeat_timeout_secs = 3600
target_url = "http://127.0.0.1:$AP/"
TOML
ANTEROOM_LOG=warn heaptrack -o "$OUT/heap" "$BIN/anteroom" --config "$OUT/a.toml" >"$OUT/anteroom.log" 2>&1 &
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$AP/readyz" >/dev/null && break
  sleep 0.3
done
curl -fs -X POST "http://127.0.0.1:$AP/api/rooms/bench/join" >/dev/null
if [ "$N" -gt 0 ]; then
  "$BIN/anteroom-loadtest" ws --target "http://127.0.0.1:$AP" --room bench --visitors "$N" \
    --arrival-rate 400 --duration 25 --think-ms 600000 >"$OUT/loadtest.json" 2>&1 &
  LT=$!
  sleep $((N / 400 + 10))
else
  sleep 10
fi
# The instance itself, not the heaptrack wrapper whose command line also names it.
pid=$(pgrep -f "^$BIN/anteroom --config $OUT/a.toml" | head -1)
kill -INT "$pid"
wait "$pid" 2>/dev/null || true
[ "$N" -gt 0 ] && wait "$LT" 2>/dev/null || true
sleep 2
for _ in $(seq 1 120); do
  pgrep -f "heaptrack -o $OUT/heap" >/dev/null || break
  sleep 1
done
f=$OUT/heap.zst
heaptrack_print -f "$f" --print-peaks 1 --print-allocators 0 --print-leaks 0 \
  --print-temporary 0 --peak-limit 25 --flamegraph-cost-type peak -F "$OUT/peak.folded" \
  >"$OUT/peaks.txt" 2>&1 || true
grep -E "peak heap memory consumption" "$OUT/peaks.txt" || true
echo "profile: $f; peaks: $OUT/peaks.txt"
[ "$N" -gt 0 ] && python3 "$(dirname "$0")/heap_breakdown.py" "$OUT/peak.folded" "$N" || true
