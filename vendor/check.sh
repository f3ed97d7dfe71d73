#!/usr/bin/env bash
# Proves that vendor/actix-http is the actix-http published on crates.io, at the version
# its Cargo.toml names, plus vendor/actix-http.patch, and nothing else.
#
# 1. Fetch: cargo fetches that exact version into its registry cache (through a throwaway
#    project that depends on `actix-http = "=VERSION"`), and the .crate's SHA-256 must be
#    the checksum cargo's resolver wrote in that project's Cargo.lock, i.e. the registry
#    index's: this is the published crate, not a local copy.
# 2. Rebuild: unpack it into a temporary folder and do what vendoring does (see
#    vendor/README.md), exactly this and no more:
#    - remove `benches/`, `examples/` and `tests/`;
#    - remove the Cargo.toml sections `[[example]]`, `[[test]]`, `[[bench]]` and
#      `[dev-dependencies]` (with `[dev-dependencies.NAME]` and the `target.*` forms);
#    - remove `.cargo_vcs_info.json`, `Cargo.toml.orig` and `Cargo.lock`, files that
#      `cargo package` writes into every .crate, when vendor/actix-http has no such file
#      (when it has one, the two are compared like any other file);
#    then apply vendor/actix-http.patch with `patch -p1 --fuzz=0` (a hunk that does not
#    apply exactly fails the check).
# 3. Compare: `diff -r` of the rebuilt tree and vendor/actix-http; any difference, in any
#    file or in which files exist, fails the check and prints the diff.
#
# Needs cargo (which reaches crates.io), tar, patch, sha256sum and diff.
# Run from anywhere: `bash vendor/check.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

vendored=vendor/actix-http
patchfile=vendor/actix-http.patch
version=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$vendored/Cargo.toml" | head -1)
[ -n "$version" ] || { echo "check.sh: no version in $vendored/Cargo.toml" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. Fetch the published crate with cargo and check it against the index's checksum.
mkdir -p "$work/fetch/src"
touch "$work/fetch/src/lib.rs"
cat > "$work/fetch/Cargo.toml" <<EOF
[package]
name = "fetch-actix-http"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
actix-http = { version = "=$version", default-features = false }

[workspace]
EOF
cargo fetch --quiet --manifest-path "$work/fetch/Cargo.toml"
want=$(awk '/^name = "actix-http"$/ { found = 1 } found && /^checksum = / { gsub(/"/, "", $3); print $3; exit }' "$work/fetch/Cargo.lock")
[ -n "$want" ] || { echo "check.sh: no checksum for actix-http $version in the lock file" >&2; exit 1; }
crate=""
for f in "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"actix-http-$version.crate"; do
  [ -f "$f" ] && [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$want" ] && { crate=$f; break; }
done
[ -n "$crate" ] || { echo "check.sh: no actix-http-$version.crate with SHA-256 $want in cargo's cache" >&2; exit 1; }

# 2. Rebuild the vendored tree from it.
tar xzf "$crate" -C "$work"
rebuilt="$work/actix-http-$version"
rm -rf "$rebuilt/benches" "$rebuilt/examples" "$rebuilt/tests"
awk '/^\[/ { drop = ($0 ~ /^\[\[(example|test|bench)\]\]$/ || $0 ~ /^\[(target\..*\.)?dev-dependencies(\..*)?\]$/) } !drop' \
  "$rebuilt/Cargo.toml" > "$work/Cargo.toml.stripped"
mv "$work/Cargo.toml.stripped" "$rebuilt/Cargo.toml"
for f in .cargo_vcs_info.json Cargo.toml.orig Cargo.lock; do
  [ -e "$vendored/$f" ] || rm -f "$rebuilt/$f"
done
patch -p1 --fuzz=0 --no-backup-if-mismatch --quiet -d "$rebuilt" < "$patchfile" \
  || { echo "check.sh: $patchfile does not apply exactly to actix-http $version" >&2; exit 1; }

# 3. Compare.
if ! diff -ru "$rebuilt" "$vendored" > "$work/diff"; then
  sed "s|$work/actix-http-$version|published+patch|g" "$work/diff"
  echo "check.sh: $vendored is not actix-http $version as published plus $patchfile (diff above:" \
    "'-' published+patch, '+' vendored); regenerate the patch or re-vendor (vendor/README.md)" >&2
  exit 1
fi
echo "vendor check: ok ($vendored = actix-http $version from crates.io + $patchfile)"
