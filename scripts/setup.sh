#!/usr/bin/env bash
# Installs the system packages throttlescope needs, only those missing.
# Idempotent and quiet when everything is present; `just demo` and
# `just test` call it first so both work on a fresh Debian machine.
# Usage: setup.sh [demo|test|macos] (default test: also checks Go and Node.js and adds the
# Apple targets; macos: only Rust and the Apple targets, for `just check-macos`).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  nanopb libnanopb-dev python3-protobuf     # firmware core + probe simulator
  gcc-arm-none-eabi picolibc-arm-none-eabi  # freestanding Cortex-M0+ check
  libnewlib-arm-none-eabi
  fio                                       # bench-io reference
  chromium                                  # report check in headless Chromium
  mount e2fsprogs                           # real-device tests: losetup, mkfs.ext4
  strace                                    # run_writes_once: who opens the run files
  smartmontools                             # smartctl: the drive's own temperature (demo too)
  gcc-mingw-w64-x86-64 wine64               # test-windows: link hostd.exe, run it under Wine
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

[[ ${1:-test} == macos ]] && missing=() # the macOS check needs no system package

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Toolchains that do not come from apt: say which one is missing up front
# rather than failing deep inside a build.
need() { # command, minimum "major.minor", how to get it, version command...
  local cmd=$1 min=$2 how=$3
  shift 3
  if ! command -v "$cmd" >/dev/null; then
    echo "setup: $cmd not found; $how" >&2
    exit 1
  fi
  local have
  have=$("$@" 2>/dev/null | grep -oE '[0-9]+\.[0-9]+' | head -n 1)
  if [[ -n $have ]] && [[ $(printf '%s\n%s\n' "$min" "$have" | sort -V | head -n 1) != "$min" ]]; then
    echo "setup: $cmd $have is older than $min; $how" >&2
    exit 1
  fi
}
need cargo 1.85 "install Rust with rustup (rustup update stable)" cargo --version
[[ ${1:-test} == demo ]] && exit 0 # the demo needs neither InfluxDB nor the dashboard checks

# The cross targets: the Apple ones `just check-macos` lints against (only their standard
# library, no Apple SDK: nothing in the workspace compiles C for them; docs/platforms.md), and
# the Windows one `just test-windows` builds and links with MinGW.
cross_targets=(aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu)
have_targets=$(rustup target list --installed 2>/dev/null) || {
  echo "setup: rustup not found; the macOS and Windows checks need Rust from rustup (rustup.rs)" >&2
  exit 1
}
for t in "${cross_targets[@]}"; do
  grep -qx "$t" <<<"$have_targets" || { echo "setup: rustup target add $t" >&2; rustup target add "$t" >/dev/null; }
done
[[ ${1:-test} == macos ]] && exit 0
need go 1.23 "install Go 1.23 or newer (the InfluxDB test server is built from its Go module)" go version
need node 20.0 "install Node.js 20 or newer with npm (dashboard type checks)" node --version
need npm 9.0 "install npm with Node.js 20 or newer" npm --version
