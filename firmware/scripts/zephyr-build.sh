#!/usr/bin/env bash
# Build (and optionally flash) the Zephyr probe firmware in firmware/app.
#
#   firmware/scripts/zephyr-build.sh BOARD            build into build/zephyr/BOARD
#   firmware/scripts/zephyr-build.sh --flash BOARD    build, then flash
#
# Needs west and a Zephyr 4.1 workspace: run `west init -l firmware && west update`
# once from the repository root (or set ZEPHYR_BASE to another 4.1 tree).
# Toolchain: native_sim uses the host gcc; Cortex-M boards use the Zephyr SDK
# when it is installed, else Debian's arm-none-eabi-gcc (gnuarmemb) with picolibc
# built from Zephyr's module (app/gnuarmemb.conf). Set ZEPHYR_TOOLCHAIN_VARIANT
# yourself to override. Extra arguments after BOARD go to CMake.
set -euo pipefail

flash=0
if [[ ${1:-} == --flash ]]; then
    flash=1
    shift
fi
board=${1:?usage: zephyr-build.sh [--flash] BOARD [cmake args...]}
shift

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
app="$root/firmware/app"
build="$root/build/zephyr/${board//\//_}"

if ! command -v west >/dev/null; then
    echo "error: west is not installed (pip install west), see docs/firmware.md" >&2
    exit 1
fi
in_workspace=0
if (cd "$root" && west topdir >/dev/null 2>&1); then
    in_workspace=1
elif [[ -z ${ZEPHYR_BASE:-} ]]; then
    echo "error: no Zephyr workspace: run 'west init -l firmware && west update' in $root," >&2
    echo "       or set ZEPHYR_BASE to a Zephyr 4.1 tree that has nanopb (see docs/firmware.md)" >&2
    exit 1
fi

cmake_args=("-DZEPHYR_EXTRA_MODULES=$root/firmware")
if [[ -z ${ZEPHYR_TOOLCHAIN_VARIANT:-} ]]; then
    case $board in
    native_sim*)
        export ZEPHYR_TOOLCHAIN_VARIANT=host
        ;;
    *)
        if [[ -z ${ZEPHYR_SDK_INSTALL_DIR:-} ]] && ! ls -d "$HOME"/zephyr-sdk-* /opt/zephyr-sdk-* >/dev/null 2>&1 &&
            command -v arm-none-eabi-gcc >/dev/null; then
            gcc_bin=$(dirname "$(command -v arm-none-eabi-gcc)")
            export ZEPHYR_TOOLCHAIN_VARIANT=gnuarmemb
            export GNUARMEMB_TOOLCHAIN_PATH=${gcc_bin%/bin}
        fi
        ;;
    esac
fi
if [[ ${ZEPHYR_TOOLCHAIN_VARIANT:-} == gnuarmemb ]]; then
    cmake_args+=("-DEXTRA_CONF_FILE=gnuarmemb.conf")
fi

cd "$root"
if [[ $in_workspace == 1 ]]; then
    west build -b "$board" "$app" -d "$build" -- "${cmake_args[@]}" "$@"
else
    # A Zephyr tree outside a west workspace: plain CMake (flashing needs west).
    cmake -S "$app" -B "$build" -G Ninja -DBOARD="$board" "${cmake_args[@]}" "$@"
    cmake --build "$build"
fi
echo "built: $build/zephyr (zephyr.elf; zephyr.uf2 on the Pico; zephyr.exe on native_sim)"

if [[ $flash == 1 ]]; then
    # A Pico held in BOOTSEL mode mounts as RPI-RP2: the uf2 runner copies to it.
    # Otherwise the board's default runner (e.g. openocd with a debug probe).
    if [[ -n ${FLASH_RUNNER:-} ]]; then
        west flash -d "$build" -r "$FLASH_RUNNER"
    elif ls -d /media/*/RPI-RP2 /run/media/*/RPI-RP2 /Volumes/RPI-RP2 >/dev/null 2>&1; then
        west flash -d "$build" -r uf2
    else
        west flash -d "$build"
    fi
fi
