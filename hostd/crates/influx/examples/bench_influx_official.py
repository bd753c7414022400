"""The peer of `just bench-influx`: the official Python `influxdb-client` (synchronous
write API, gzip on, batches of 5 000 `Point`s) writing the same probe points as the Rust
writer: 8 fields, 3 tags, 200 us apart.

Usage: python bench_influx_official.py URL TOKEN_FILE ORG BUCKET POINTS RUN_TAG
Prints one JSON line: points, wall seconds, CPU seconds of this process.
"""

import json
import sys
import time

from influxdb_client import InfluxDBClient, Point, WritePrecision
from influxdb_client.client.write_api import SYNCHRONOUS


def main() -> None:
    url, token_file, org, bucket, n, run = sys.argv[1:7]
    n = int(n)
    with open(token_file, encoding="utf-8") as f:
        token = next(line.strip() for line in f if line.strip())
    t0_ns = 1_700_000_000_000_000_000
    client = InfluxDBClient(url=url, token=token, org=org, enable_gzip=True, timeout=600_000)
    write = client.write_api(write_options=SYNCHRONOUS)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    batch = []
    for i in range(n):
        batch.append(
            Point("probe")
            .tag("rig", "bench")
            .tag("run", run)
            .tag("probe", "p0")
            .field("seq", i)
            .field("vbus_v", 5.0 + (i % 97) * 1e-4)
            .field("current_a", 1.2 + (i % 89) * 1e-4)
            .field("power_w", 6.0 + (i % 83) * 1e-3)
            .field("energy_j", i * 1.2e-3)
            .field("charge_c", i * 2.4e-4)
            .field("die_temp_c", 41.0 + (i % 71) * 1e-2)
            .field("enclosure_temp_c", 38.0 + (i % 67) * 1e-2)
            .time(t0_ns + i * 200_000, WritePrecision.NS)
        )
        if len(batch) == 5_000:
            write.write(bucket=bucket, org=org, record=batch, write_precision=WritePrecision.NS)
            batch = []
    if batch:
        write.write(bucket=bucket, org=org, record=batch, write_precision=WritePrecision.NS)
    seconds = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    client.close()
    print(json.dumps({"points": n, "seconds": seconds, "cpu_seconds": cpu}))


if __name__ == "__main__":
    main()
