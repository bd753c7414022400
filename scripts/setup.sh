#!/usr/bin/env bash
# Installs the system packages throttlescope needs, only those missing.
# Idempotent and quiet when everything is present; `just demo` and
# `just test` call it first so both work on a fresh Debian machine.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  nanopb libnanopb-dev python3-protobuf     # firmware core + probe simulator
  gcc-arm-none-eabi picolibc-arm-none-eabi  # freestanding Cortex-M0+ check
  libnewlib-arm-none-eabi
  fio                                       # bench-io reference
  chromium                                  # report check in headless Chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust with rustup" >&2; exit 1; }
