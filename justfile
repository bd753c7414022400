# throttlescope everyday commands. `just --list` shows them all.

set shell := ["bash", "-euo", "pipefail", "-c"]

root := justfile_directory()
fw_build := root / "build/firmware"
cargo := "cargo --locked --manifest-path " + root / "hostd/Cargo.toml"
hostd := root / "hostd/target/release/hostd"

# The probe simulator that `hostd --probe sim` starts.
export THROTTLESCOPE_PROBE_SIM := fw_build / "sim/throttlescope-probe-sim"

# List the recipes.
default:
    @just --list

# Install the system packages that are missing (idempotent).
setup:
    @{{root}}/scripts/setup.sh

# Build hostd (release) and the probe simulator.
build: setup firmware-build
    {{cargo}} build --release -p hostd

# The main job on embedded defaults: quick profile, simulated probe, temporary run directory.
demo: build
    #!/usr/bin/env bash
    set -euo pipefail
    work=$(mktemp -d -t throttlescope-demo.XXXXXX)
    {{hostd}} run --profile quick --probe sim --target "$work/target" --out "$work/run"
    echo
    echo "demo results: $work/run"

# The whole test suite (what CI runs).
test: setup test-firmware test-hostd

# Configure and build the firmware core, its host tests and the probe simulator.
firmware-build:
    cmake -S {{root}}/firmware -B {{fw_build}} -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build {{fw_build}}

# Firmware core host tests (ctest) and the freestanding Cortex-M0+ compile.
test-firmware: firmware-build
    ctest --test-dir {{fw_build}} --output-on-failure

# hostd: formatting, lints and the Rust tests.
test-hostd: firmware-build
    {{cargo}} fmt --all --check
    {{cargo}} clippy --workspace --all-targets -- -D warnings
    {{cargo}} test --workspace

# All benchmarks.
bench: bench-io bench-firmware
