#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the build and the end-to-end tests need,
# only those that are missing. As root it runs apt-get itself; otherwise it
# prints the one command to run and exits non-zero.
set -euo pipefail

# What each group is for:
#   Tauri 2 (WebKitGTK 4.1 and friends): building the desktop shell.
#   chromium: the Playwright end-to-end tests (never a browser download).
#   xvfb, xauth, webkit2gtk-driver, fonts, imagemagick: running the real window headless
#   (the desktop smoke test, screenshots).
#   libreoffice-calc-nogui: keiri-xlsx's test that a styled workbook opens in a real
#   spreadsheet engine (headless conversion).
# Then, not from apt: tauri-driver (crates.io, ~70 s to build), the WebDriver front of
# WebKitWebDriver that the desktop smoke test talks to.
packages=(
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libsoup-3.0-dev libjavascriptcoregtk-4.1-dev build-essential pkg-config
  libssl-dev libxdo-dev file
  chromium xvfb xauth x11-utils webkit2gtk-driver fonts-dejavu-core fonts-noto-cjk
  imagemagick libreoffice-calc-nogui
)
if [ "${KEIRI_SETUP_MINIMAL:-}" = 1 ]; then
  packages=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
    libsoup-3.0-dev libjavascriptcoregtk-4.1-dev build-essential pkg-config libssl-dev libxdo-dev file)
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup-system: not a Debian/Ubuntu system; install the WebKitGTK 4.1 development packages and chromium by hand" >&2
  exit 0
fi

# tauri-driver, only when missing (the version the smoke test was written against).
TAURI_DRIVER_VERSION=2.1.0
install_tauri_driver() {
  if [ "${KEIRI_SETUP_MINIMAL:-}" = 1 ] || command -v tauri-driver >/dev/null 2>&1 \
    || [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver" ]; then
    return 0
  fi
  echo "setup-system: installing tauri-driver $TAURI_DRIVER_VERSION (cargo install, about a minute)"
  cargo install tauri-driver --locked --version "$TAURI_DRIVER_VERSION" --quiet
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  install_tauri_driver
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup-system: missing system packages; run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "setup-system: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_tauri_driver
