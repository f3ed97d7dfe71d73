"""Splits heaptrack's peak heap (a folded stack file: heaptrack_print --flamegraph-cost-type
peak -F FILE) into where the bytes of an open queue socket go, per socket.

    python3 bench/heap_breakdown.py peak.folded 2000

Each stack counts under the first category matched from its leaf up.
"""
import sys, re, collections
path=sys.argv[1]; n=int(sys.argv[2])
cats=[
 ("actix-http h1 Dispatcher::new read_buf/write_buf (8 KiB each)", r"h1..dispatcher..Dispatcher.*::new"),
 ("actix-http dispatcher read_buf growth (poll_read reserve)", r"dispatcher.*read_available"),
 ("actix-http other", r"actix_http::"),
 ("actix-ws", r"actix_ws"),
 ("hub", r"anteroom::hub::"),
 ("ws session_loop", r"anteroom::web::ws::session_loop"),
 ("ws handler (upgrade)", r"anteroom::web::ws::"),
 ("tokio spawn (task cells)", r"tokio::runtime::task::(raw|core)::.*new|tokio::runtime::.*spawn"),
 ("tokio mpsc", r"tokio::sync::mpsc"),
 ("tokio time", r"tokio::runtime::time|tokio::time"),
 ("tokio io / net", r"tokio::(io|net|runtime::io)"),
 ("redis", r"redis::"),
 ("actix-server", r"actix_server"),
 ("actix-web", r"actix_web"),
]
cc=[(name,re.compile(p)) for name,p in cats]
tot=collections.Counter(); other=collections.Counter()
for line in open(path):
    line=line.rstrip('\n')
    if not line: continue
    stack,_,cost=line.rpartition(' ')
    try: cost=int(cost)
    except: continue
    frames=stack.split(';')
    hit=None
    # deepest (leaf-most) match wins
    for f in reversed(frames):
        for name,rx in cc:
            if rx.search(f):
                hit=name;break
        if hit: break
    if not hit:
        hit='other'
        # name the first non-alloc frame from leaf
        for f in reversed(frames):
            if not re.search(r"alloc|malloc|raw_vec|Box|Arc|Vec|hashbrown|core::|std::", f):
                other[f[:100]]+=cost;break
    tot[hit]+=cost
s=sum(tot.values())
print(f"total {s/1024/1024:.2f} MiB, per socket {s/n/1024:.2f} KiB" if n else f"total {s/1024:.1f} KiB")
for k,v in tot.most_common():
    print(f"{v/ (n or 1):10.0f} B/socket  {v/1024/1024:7.2f} MiB  {k}")
print("--- other top")
for k,v in other.most_common(5): print(f"{v/(n or 1):8.0f}  {k}")
