#!/usr/bin/env bash
# Installs the .deb that `make package` built into a clean Debian chroot (debootstrap from
# Debian's apt repositories), starts the installed app under Xvfb there, and saves a
# screenshot of its window to ui/test-results/deb-installed.png. Needs root and debootstrap.
#
#   scripts/deb-smoke.sh [path/to/keiri-studio_*.deb] [chroot-dir]
#
# The chroot is reused when it exists (a minbase bookworm is ~5 minutes to create); the app
# runs with a fresh HOME and workspace inside it, so the screenshot shows a first start.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$repo_root/target}"
deb="${1:-$(ls -1t "$target_dir"/release/bundle/deb/*.deb 2>/dev/null | head -1)}"
root="${2:-${KEIRI_CHROOT:-/var/tmp/keiri-deb-chroot}}"
[ -f "$deb" ] || { echo "deb-smoke: no .deb found (run make package)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "deb-smoke: needs root (chroot)" >&2; exit 2; }

if [ ! -x "$root/usr/bin/apt-get" ]; then
  echo "deb-smoke: creating a clean bookworm chroot in $root"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
fi

mounted=()
cleanup() {
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
for fs in proc sys dev; do
  if ! mountpoint -q "$root/$fs"; then
    mount --bind "/$fs" "$root/$fs"
    mounted+=("$root/$fs")
  fi
done
# WebKit's processes share memory through /dev/shm; without it the window stays blank.
for fs in dev/shm dev/pts; do
  if ! mountpoint -q "$root/$fs"; then
    mount -t "$([ "$fs" = dev/shm ] && echo tmpfs || echo devpts)" none "$root/$fs"
    mounted=("$root/$fs" "${mounted[@]}")
  fi
done
cp /etc/resolv.conf "$root/etc/resolv.conf"

cp "$deb" "$root/tmp/keiri-studio.deb"
echo "deb-smoke: apt install ./keiri-studio.deb (and Xvfb + ImageMagick to look at it)"
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive bash -c '
  apt-get update -qq &&
  apt-get install -y -qq --no-install-recommends /tmp/keiri-studio.deb \
    xvfb xauth imagemagick fonts-noto-cjk dbus-x11 >/dev/null &&
  dpkg -s keiri-studio | grep -E "^(Package|Version|Depends):"'

echo "deb-smoke: starting the installed app under Xvfb"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -c '
  export HOME=$(mktemp -d) && cd "$HOME" && mkdir books &&
  export KEIRI_WORKSPACE="$HOME/books"
  Xvfb :97 -screen 0 1280x800x24 >/dev/null 2>&1 &
  xvfb=$!
  sleep 1
  DISPLAY=:97 keiri-studio >/tmp/keiri-studio.log 2>&1 &
  app=$!
  sleep 25
  DISPLAY=:97 import -window root /tmp/deb-installed.png
  alive=no; kill -0 $app 2>/dev/null && alive=yes
  kill $app $xvfb 2>/dev/null || true
  echo "app still running after 25 s: $alive"
  tail -5 /tmp/keiri-studio.log'
mkdir -p "$repo_root/ui/test-results"
cp "$root/tmp/deb-installed.png" "$repo_root/ui/test-results/deb-installed.png"
echo "deb-smoke: screenshot in ui/test-results/deb-installed.png"
