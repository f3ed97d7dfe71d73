#!/usr/bin/env bash
# Builds anteroom_<version>_<arch>.deb with dpkg-deb: the binary, a commented
# /etc/anteroom/anteroom.toml (a conffile), a hardened systemd unit, an `anteroom` system
# user made by postinst, and /var/lib/anteroom. Installing it does not start anything.
#
#   packaging/build-deb.sh                      # cargo build --release, package into target/deb/
#   packaging/build-deb.sh --binary PATH        # package this binary instead (the tests)
#   packaging/build-deb.sh --out DIR            # where the .deb goes (default target/deb)
#   packaging/build-deb.sh --compression none   # dpkg-deb -Z: xz (default), gzip, none
#
# Prints the path of the .deb it wrote on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary=""
out="$root/target/deb"
compression=xz
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --compression) compression="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release --bin anteroom)
  binary="$root/target/release/anteroom"
fi
[ -x "$binary" ] || { echo "not an executable: $binary" >&2; exit 1; }

# The workspace version (the one line `version = "…"` under [workspace.package]).
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$root/Cargo.toml")
[ -n "$version" ] || { echo "no version in Cargo.toml" >&2; exit 1; }
arch=$(dpkg --print-architecture)

mkdir -p "$out"
stage=$(mktemp -d "${out}/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
pkg="$stage/anteroom"

install -D -m 0755 "$binary" "$pkg/usr/bin/anteroom"
# A debug binary (the tests) is large; strip a copy only when the tool is there.
command -v strip >/dev/null 2>&1 && strip --strip-debug "$pkg/usr/bin/anteroom" 2>/dev/null || true
install -D -m 0644 "$root/packaging/debian/anteroom.service" "$pkg/lib/systemd/system/anteroom.service"
install -d -m 0755 "$pkg/var/lib/anteroom"
for doc in README.md docs/operations.md docs/configuration.md; do
  install -D -m 0644 "$root/$doc" "$pkg/usr/share/doc/anteroom/$(basename "$doc")"
done

# The conffile: the built-in defaults (src/config/default.toml, every setting with its
# default), each setting commented out, under a header saying what to change first.
install -d -m 0755 "$pkg/etc/anteroom"
{
  cat "$root/packaging/debian/anteroom.toml.head"
  echo
  sed -E 's/^([^#[:space:]])/# \1/' "$root/src/config/default.toml"
} > "$pkg/etc/anteroom/anteroom.toml"
chmod 0640 "$pkg/etc/anteroom/anteroom.toml"

install -d -m 0755 "$pkg/DEBIAN"
echo "/etc/anteroom/anteroom.toml" > "$pkg/DEBIAN/conffiles"
install -m 0755 "$root/packaging/debian/postinst" "$pkg/DEBIAN/postinst"
install -m 0755 "$root/packaging/debian/prerm" "$pkg/DEBIAN/prerm"
install -m 0755 "$root/packaging/debian/postrm" "$pkg/DEBIAN/postrm"
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: anteroom
Version: $version
Architecture: $arch
Maintainer: Anteroom maintainers <anteroom@localhost>
Installed-Size: $size
Depends: adduser, libc6
Recommends: redis-server
Section: web
Priority: optional
Description: fair virtual waiting room backed by Redis
 Anteroom sits in front of a site and lets visitors in strictly in the order
 they arrived, never more at once than a room's capacity. This package ships
 the server, a commented configuration and a sandboxed systemd unit; the
 service is not started until the operator enables it.
CONTROL

deb="$out/anteroom_${version}_${arch}.deb"
# --root-owner-group: every file root:root whoever builds (no fakeroot needed).
dpkg-deb --root-owner-group "-Z$compression" --build "$pkg" "$deb" >/dev/null
echo "$deb"
