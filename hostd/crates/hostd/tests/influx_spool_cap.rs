//! A run whose InfluxDB is away the whole time keeps its spool under `--influx-spool-max`:
//! the points past the cap are counted as dropped in summary.json and the closing warning
//! says how to load them, and `hostd import RUN_DIR` afterwards puts every record of the run
//! directory in InfluxDB (the spooled ones again, without doubling them).

use hostd_influx::testing::InfluxServer;

mod common;
use common::{assert_ok, disk_target, hostd, hostd_run, paced_profile, read_json, to_influx};

const CAP: u64 = 200_000;

#[test]
fn the_spool_stops_at_its_cap_and_import_loads_the_rest() {
    let mut server = InfluxServer::start().unwrap_or_else(|e| panic!("{e:#}"));
    server.stop().unwrap(); // away for the whole run
    let (work, target, run) = disk_target();
    let mut cmd = hostd_run(paced_profile(work.path()), [&target], &run);
    let out = to_influx(
        cmd.args(["--probe", "sim", "--influx-spool-max", "200kB"]),
        &server,
    )
    .output()
    .unwrap();
    let text = common::text(&out);
    assert_ok(&out);

    let summary = read_json(&run.join("summary.json"));
    let inf = &summary["extra"]["influx"];
    eprintln!("summary.extra.influx = {inf}");
    let n = |k: &str| inf[k].as_u64().unwrap_or_else(|| panic!("{k} in {inf}"));
    assert_eq!(inf["complete"], false);
    assert_eq!(n("spool_max_bytes"), CAP);
    assert!(n("points_dropped") > 0, "the cap was reached: {inf}");
    assert!(n("points_spooled") > 0);
    assert!(n("spool_peak_bytes") <= CAP && n("spool_peak_bytes") > CAP / 2);
    assert_eq!(n("memory_batches_peak"), 0, "the disk took the spool");
    let on_disk: u64 = std::fs::read_dir(run.join("spool"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(on_disk <= CAP, "{on_disk} bytes in spool/");
    assert_eq!(n("points_waiting_in_spool"), n("points_spooled"));
    // The closing text says it too.
    assert!(
        text.contains("warning: influx: InfluxDB: 0 points written")
            && text.contains("dropped (the spool reached its cap of 200.0 kB)"),
        "{text}"
    );
    let warning = summary["warnings"].to_string();
    assert!(
        warning.contains("dropped (the spool reached its cap of 200.0 kB)")
            && warning.contains(&format!("hostd import {}", run.display())),
        "{warning}\n{text}"
    );

    // Back: the import puts every record there, the spooled ones only once.
    server.restart().unwrap();
    let out = to_influx(hostd().arg("import").arg(&run), &server)
        .output()
        .unwrap();
    assert_ok(&out);
    // More than the spool held: the dropped points came from the run directory. (Dropped
    // points are of every measurement, the 10 ms aggregates too, so they may outnumber the
    // probe's samples: the test once failed so, 6 648 dropped for 6 645 samples.)
    let probe = common::probe_samples(&run).len() as u64;
    assert!(probe > n("points_spooled"), "{probe} samples");
    assert_eq!(server.count("probe", "seq").unwrap(), probe);
    assert_eq!(
        server.count("probe_agg", "power_w_mean").unwrap(),
        common::agg_rows(&run)
    );
    assert_eq!(
        server.count("file", "bytes").unwrap(),
        common::record_count(&run.join("files.csv"))
    );
    assert_eq!(server.count("run", "profile").unwrap(), 1);
}
