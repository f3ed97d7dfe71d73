#!/usr/bin/env bash
# Fills .devbin/ with what bench/device.py needs on a lent machine that has no Redis and
# no registry: the release binaries (stripped), redis-server, redis-cli, redis-benchmark
# and the libraries they link beyond libc, libm, libstdc++ and libgcc (in .devbin/lib,
# for LD_LIBRARY_PATH). .devbin/ is kept out of git (.git/info/exclude). See
# bench/device.py for the command to run there.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p anteroom -p anteroom-loadtest
rm -rf .devbin
mkdir -p .devbin/bin .devbin/lib
cp target/release/anteroom target/release/anteroom-loadtest .devbin/bin/
strip .devbin/bin/anteroom .devbin/bin/anteroom-loadtest
for b in redis-server redis-cli redis-benchmark; do
  cp "$(command -v "$b")" .devbin/bin/
done
for b in .devbin/bin/redis-*; do
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s)\.so' | while read -r lib; do
  cp -L "$lib" .devbin/lib/
done
mkdir -p .git/info
grep -qx '/.devbin/' .git/info/exclude 2>/dev/null || echo '/.devbin/' >> .git/info/exclude
du -sh .devbin
