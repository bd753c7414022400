#!/usr/bin/env python3
"""Turn one sigrok session file (.sr) of a USB PD capture into edge-timing
fixtures for the firmware core's PD decoder test (fixtures/usb-pd/).

For every CC channel of the capture (a probe named CC1 or CC2) on which
sigrok's usb_power_delivery decoder finds at least one packet, it writes

  <out>/<stem>.<ch>.edges       the channel's level transitions
  <out>/<stem>.<ch>.sigrok.txt  sigrok-cli's decoding of that channel alone

The .edges format (text, one item a line; '#' starts a comment):
  clock_hz <sample rate of the capture>
  samples <number of samples in the capture>
  initial_level <0|1>
  @<t> <d1> <d2> ...   one burst: an edge at sample t, then edges d1, d1+d2,
                       ... samples after it; the level toggles at each edge.
A burst ends where two edges lie more than `--gap` samples apart.

The .sigrok.txt file is sigrok-cli's annotation output with sample numbers
(`-P usb_power_delivery:cc1=<ch>:fulltext=yes --protocol-decoder-samplenum`)
for the classes sop, header, data, crc, warnings and text (the full-text
line repeats the type and payload classes; the 4b5b symbols are left out).

Usage: sr2edges.py FILE.sr OUTDIR [--stem NAME] [--source TEXT] [--channels CC1,CC2]
"""
import argparse
import configparser
import os
import re
import subprocess
import sys
import zipfile

ANNOTATIONS = "sop:header:data:crc:warnings:text"


def read_capture(path):
    with zipfile.ZipFile(path) as z:
        meta = configparser.ConfigParser()
        meta.read_string(z.read("metadata").decode())
        dev = meta["device 1"]
        rate_s = dev["samplerate"].strip()
        m = re.fullmatch(r"([0-9.]+)\s*(|k|M|G)Hz", rate_s)
        if not m:
            sys.exit("cannot read samplerate %r" % rate_s)
        rate = float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]
        unit = int(dev["unitsize"])
        base = dev["capturefile"]
        probes = {}
        for k, v in dev.items():
            pm = re.fullmatch(r"probe(\d+)", k)
            if pm:
                probes[v.strip()] = int(pm.group(1)) - 1
        chunks = sorted(
            (n for n in z.namelist() if n == base or n.startswith(base + "-")),
            key=lambda n: int(n.rsplit("-", 1)[1]) if n != base else 0)
        data = b"".join(z.read(n) for n in chunks)
    return int(round(rate)), unit, probes, data


def channel_levels(data, unit, bit):
    """One byte per sample, 0 or 1: the channel's level."""
    byte, shift = divmod(bit, 8)
    if unit > 1:
        data = data[byte::unit]
    table = bytes(((b >> shift) & 1) for b in range(256))
    return data.translate(table)


def edges_of(levels):
    return [m.start() + 1 for m in re.finditer(rb"(?=\x00\x01|\x01\x00)", levels)]


def write_edges(path, source, ch, rate, levels, edges, gap):
    with open(path, "w") as f:
        f.write("# USB PD CC line edges from %s, channel %s\n" % (source, ch))
        f.write("# written by firmware/scripts/sr2edges.py; format in fixtures/usb-pd/README.md\n")
        f.write("clock_hz %d\nsamples %d\ninitial_level %d\n" % (rate, len(levels), levels[0]))
        i = 0
        while i < len(edges):
            j = i + 1
            while j < len(edges) and edges[j] - edges[j - 1] <= gap:
                j += 1
            deltas = [edges[k] - edges[k - 1] for k in range(i + 1, j)]
            f.write("@%d%s\n" % (edges[i], "".join(" %d" % d for d in deltas)))
            i = j


def sigrok_decode(sr, ch):
    out = subprocess.run(
        ["sigrok-cli", "-i", sr, "-P",
         "usb_power_delivery:cc1=%s:fulltext=yes" % ch,
         "-A", "usb_power_delivery=" + ANNOTATIONS,
         "--protocol-decoder-samplenum"],
        check=True, capture_output=True, text=True).stdout
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sr")
    ap.add_argument("outdir")
    ap.add_argument("--stem", help="fixture name (default: the .sr file's name)")
    ap.add_argument("--source", help="where the .sr file comes from (for the fixture's comment)")
    ap.add_argument("--channels", default="CC1,CC2")
    ap.add_argument("--gap", type=int, default=None,
                    help="burst split in samples (default: 10 us)")
    a = ap.parse_args()
    stem = a.stem or os.path.splitext(os.path.basename(a.sr))[0]
    source = a.source or os.path.basename(a.sr)
    rate, unit, probes, data = read_capture(a.sr)
    gap = a.gap if a.gap is not None else rate // 100000
    for ch in a.channels.split(","):
        if ch not in probes:
            continue
        decoded = sigrok_decode(a.sr, ch)
        if not re.search(r": H:[0-9a-f]{4}$|: #\d+ .*(HRST|CRST)", decoded, re.M):
            print("%s: no PD packet on %s, skipped" % (a.sr, ch))
            continue
        levels = channel_levels(data, unit, probes[ch])
        edges = edges_of(levels)
        base = os.path.join(a.outdir, "%s.%s" % (stem, ch.lower()))
        write_edges(base + ".edges", source, ch, rate, levels, edges, gap)
        with open(base + ".sigrok.txt", "w") as f:
            f.write(decoded)
        print("%s: %s: %d edges, %d packets" % (
            a.sr, ch, len(edges), len(re.findall(r": #\d+ ", decoded))))


if __name__ == "__main__":
    main()
