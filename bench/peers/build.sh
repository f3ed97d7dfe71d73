#!/usr/bin/env bash
# Builds the two Redis-backed peers of issue 35 item 4 from their public sources into
# target/peers/ (git-ignored): nothing of theirs is committed here, only this recipe.
#
#   bash bench/peers/build.sh            # extract, patch, install, build both
#
# Sources: git mirrors of the public repositories (no work tree), HEAD of each, extracted
# with `git archive` (PEER_MIRRORS, default /work/.mirror):
#   pjt3591oo/simple-waiting-system   Express 4 backend (backend/), ioredis; no license file
#                                     and no "license" field in its package.json: all rights
#                                     reserved by default; built and run here only to measure
#                                     it, never redistributed.
#   vercel-labs/nextjs-waiting-room   Next.js 16, ioredis provider; MIT (package.json
#                                     "license": "MIT").
#
# Local patches, each the least that lets it run on this machine, none on a hot path:
#   simple-waiting-system: backend/utils/redis.js connects to localhost:6379 fixed; it
#     reads REDIS_PORT instead (so the bench's own redis-server on a free port is used).
#   nextjs-waiting-room: src/app/layout.tsx loads the Geist fonts from Google Fonts at
#     build time (next/font/google), which this machine cannot reach; the font imports are
#     dropped (the API routes measured render no HTML). Its package-lock.json is out of
#     step with package.json (the project uses pnpm), so `npm install` resolves it.
# Node: the machine's node 20 (nextjs-waiting-room asks for 24.x; npm warns, it builds and
# runs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$ROOT/target/peers"
MIRRORS="${PEER_MIRRORS:-/work/.mirror}"
mkdir -p "$OUT"

extract() { # name (owner+repo)
  local d="$OUT/$1"
  rm -rf "$d"
  mkdir -p "$d"
  git --git-dir="$MIRRORS/$1/repo" archive HEAD | tar -x -C "$d"
  git --git-dir="$MIRRORS/$1/repo" rev-parse HEAD > "$d/.bench-commit"
  echo "extracted $1 at $(cat "$d/.bench-commit")"
}

# --- simple-waiting-system ---------------------------------------------------------------
S=pjt3591oo+simple-waiting-system
extract "$S"
python3 - "$OUT/$S/backend/utils/redis.js" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "port: 6379,"
assert old in s, "redis.js changed upstream: look at the patch"
open(p, "w").write(s.replace(old, "port: Number(process.env.REDIS_PORT || 6379),", 1))
PY
(cd "$OUT/$S/backend" && npm ci --no-audit --no-fund --loglevel=error)

# --- nextjs-waiting-room ----------------------------------------------------------------
N=vercel-labs+nextjs-waiting-room
extract "$N"
python3 - "$OUT/$N/src/app/layout.tsx" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
assert 'from "next/font/google"' in s, "layout.tsx changed upstream: look at the patch"
s = s.replace('import { Geist, Geist_Mono } from "next/font/google";\n', "")
s = re.sub(r"const geist(Sans|Mono) = Geist(_Mono)?\(\{.*?\}\);\n\n", "", s, flags=re.S)
s = s.replace("className={`${geistSans.variable} ${geistMono.variable} h-full antialiased`}",
              'className="h-full antialiased"')
assert "geist" not in s.lower(), s
open(p, "w").write(s)
PY
(cd "$OUT/$N" && npm install --no-audit --no-fund --loglevel=error \
  && NEXT_TELEMETRY_DISABLED=1 npx next build)
echo "built: $OUT/$S/backend (node bin/www), $OUT/$N (next start)"
