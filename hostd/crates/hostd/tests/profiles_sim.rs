//! The adaptive profiles of issue #12 end to end through `hostd run`: cache recovery
//! and the paced sweep on simulated drives whose truth is in their scenario files
//! (`fixtures/scenarios/slc-recovery.toml`, `thermal-ceiling.toml`), played faster than
//! real time; mixed I/O and a duration run on a real directory; bad input refused
//! before anything is written. Real devices: `real_profiles.rs`.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/scenarios")
        .join(format!("{name}.toml"))
        .display()
        .to_string()
}

/// Runs `hostd run -q` with `profile` (TOML text) on `target`; returns the run
/// directory and summary.json.
fn run(dir: &Path, profile: &str, target: &str, extra: &[&str]) -> (PathBuf, Value) {
    let prof = dir.join("profile.toml");
    std::fs::write(&prof, profile).unwrap();
    let out = dir.join("run");
    let res = common::hostd()
        .args(["run", "-q", "--seed", "5", "--profile"])
        .arg(&prof)
        .arg("--target")
        .arg(target)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .expect("hostd runs");
    let log = common::text(&res);
    assert!(res.status.success(), "hostd run failed:\n{log}");
    eprintln!("{log}");
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    (out, summary)
}

/// The `programs` result of `kind` in summary.json.
fn result<'a>(summary: &'a Value, kind: &str) -> &'a Value {
    summary["programs"]
        .as_array()
        .expect("summary.json has programs[]")
        .iter()
        .find(|r| r["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} result in {}", summary["programs"]))
        .get("result")
        .unwrap()
}

const SCALE: f64 = 50.0;
/// slc-recovery.toml: the cache and its refill time constant (virtual s).
const CACHE: f64 = 12e9;
const TAU_S: f64 = 20.0;

#[test]
fn cache_recovery_on_a_simulated_slc_drive_measures_each_refill_and_its_time_constant() {
    let dir = tempfile::tempdir().unwrap();
    let profile = "name = \"cr\"\ndescription = \"cache recovery, simulated\"\nkind = \"cache-recovery\"\n[cache_recovery]\nchunk = \"1GiB\"\nlimit = \"40GiB\"\npauses = [\"10s\", \"20s\", \"40s\", \"80s\"]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"write\"]\nverify = false\n";
    let target = format!("sim:{}*{SCALE}", scenario("slc-recovery"));
    let (_, summary) = run(dir.path(), profile, &target, &[]);
    let r = result(&summary, "cache-recovery");
    let bursts = r["bursts"].as_array().unwrap();
    assert_eq!(bursts.len(), 5, "{r}");
    let chunk = r["chunk_bytes"].as_f64().unwrap();
    for b in bursts {
        assert_eq!(b["dropped"], true, "{b}");
        // A drained cache refills to C·(1 − e^(−t/τ)) (pauses and records are the modelled
        // drive's time, the run played SCALE× faster). The idle the simulator saw: from the
        // last write before the pause to the first after it (hostd measures it from the
        // same records; it exceeds the pause asked for by the runner's own milliseconds,
        // SCALE× on this clock).
        let truth = match (b["pause_s"].as_f64(), b["idle_s"].as_f64()) {
            (None, _) => CACHE,
            (Some(p), Some(idle)) => {
                assert!(idle >= p && idle < p + 0.2 * SCALE, "{b}");
                CACHE * (1.0 - (-idle / TAU_S).exp())
            }
            (Some(_), None) => panic!("no measured idle: {b}"),
        };
        let est = b["fast_bytes"].as_f64().unwrap();
        let (lo, hi) = (
            b["fast_bytes_low"].as_f64().unwrap(),
            b["fast_bytes_high"].as_f64().unwrap(),
        );
        eprintln!(
            "pause {:?}: {:.2} GB at the fast rate, truth {:.2} GB",
            b["pause_s"],
            est / 1e9,
            truth / 1e9
        );
        assert!(
            lo <= truth + 0.02 * chunk && truth <= hi + 0.02 * chunk,
            "{b} vs {truth}"
        );
        assert!((est - truth).abs() < 0.1 * chunk, "{b} vs {truth}");
    }
    let fit = &r["fit"];
    let tau = fit["tau_s"].as_f64().expect("the fit carries");
    let (tlo, thi) = (
        fit["tau_low_s"].as_f64().unwrap(),
        fit["tau_high_s"].as_f64().unwrap(),
    );
    assert!(tlo <= TAU_S && TAU_S <= thi, "τ {tau} s in [{tlo}, {thi}]");
    assert!((tau - TAU_S).abs() < 0.1 * TAU_S, "τ {tau} s");
    let c = fit["capacity_bytes"].as_f64().unwrap();
    assert!((c - CACHE).abs() < 0.05 * CACHE, "C {c}");
}

#[test]
fn paced_sweep_on_a_simulated_hot_drive_finds_the_highest_rate_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let profile = "name = \"ps\"\ndescription = \"paced sweep, simulated\"\nkind = \"paced-sweep\"\n[paced_sweep]\nchunk = \"1GiB\"\nstep_time = \"60s\"\npercents = [25, 50, 75, 100]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"write\"]\nverify = false\n";
    let target = format!("sim:{}*20", scenario("thermal-ceiling"));
    let sim = common::sim_path();
    let sim = sim.to_str().unwrap();
    let (_, summary) = {
        std::env::set_var("THROTTLESCOPE_PROBE_SIM", sim);
        run(dir.path(), profile, &target, &["--probe", "sim"])
    };
    let r = result(&summary, "paced-sweep");
    // thermal-ceiling.toml: equilibrium 53.75 °C at 75 %, 60 °C at 100 %, throttle at 55 °C.
    assert_eq!(r["highest_held_percent"], 75.0, "{r}");
    let steps = r["steps"].as_array().unwrap();
    let held: Vec<(f64, bool)> = steps
        .iter()
        .filter_map(|s| Some((s["percent"].as_f64()?, s["held"].as_bool()?)))
        .collect();
    assert_eq!(
        held,
        [(25.0, true), (50.0, true), (75.0, true), (100.0, false)],
        "{r}"
    );
    // 1.0 GB/s before the throttle: the modelled drive's rate, though played 20× faster.
    let unthrottled = r["unthrottled_bps"].as_f64().unwrap();
    assert!((unthrottled / 1e9 - 1.0).abs() < 0.05, "{unthrottled}");
    // The probe: power rises with the paced rate; the 100 % step reaches the throttle.
    let power: Vec<f64> = steps[1..]
        .iter()
        .map(|s| s["mean_power_w"].as_f64().expect("probe figures per step"))
        .collect();
    assert!(power.windows(2).all(|w| w[0] < w[1]), "{power:?}");
    let hottest = steps[4]["temp_max_c"].as_f64().unwrap();
    assert!(hottest >= 54.0, "{hottest}");
}

#[test]
fn mixed_diskmark_tests_report_each_direction_at_their_read_share() {
    let dir = tempfile::tempdir().unwrap();
    let target = common::disk_tempdir();
    let profile = "name = \"mix\"\ndescription = \"mixed\"\nkind = \"diskmark\"\n[diskmark]\nfile_size = \"32MiB\"\nrepetitions = 2\ntests = [\n{ name = \"RND4K-QD32-70R\", pattern = \"random\", block_size = \"4KiB\", queue_depth = 32, bytes = \"8MiB\", read_percent = 70 },\n{ name = \"SEQ1M-QD8-50R\", pattern = \"sequential\", block_size = \"1MiB\", queue_depth = 8, read_percent = 50 },\n]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"read\", \"write\"]\nverify = true\n";
    let (out, summary) = run(dir.path(), profile, target.path().to_str().unwrap(), &[]);
    let r = result(&summary, "mixed");
    let tests = r["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2, "{r}");
    for (t, share, ios) in [(&tests[0], 0.70f64, 2048.0f64), (&tests[1], 0.50, 32.0)] {
        // Binomial: the read share within 4σ of the asked one.
        let sigma = (share * (1.0 - share) / (2.0 * ios)).sqrt();
        let got = t["read_share"].as_f64().unwrap();
        assert!((got - share).abs() < 4.0 * sigma, "{t}");
        for job in t["jobs"].as_array().unwrap() {
            let (r, w) = (
                job["read_bytes"].as_u64().unwrap(),
                job["write_bytes"].as_u64().unwrap(),
            );
            assert!(r > 0 && w > 0, "{job}");
            assert_eq!(
                job["read_ops"].as_u64().unwrap() + job["write_ops"].as_u64().unwrap(),
                ios as u64,
                "{job}"
            );
        }
        assert!(t["read_bps"].as_f64().unwrap() > 0.0 && t["write_bps"].as_f64().unwrap() > 0.0);
    }
    // Every read of the mixed jobs was verified clean, including blocks they wrote.
    let files = std::fs::read_to_string(out.join("files.csv")).unwrap();
    let mix: Vec<&str> = files.lines().filter(|l| l.contains("-mix,")).collect();
    assert_eq!(mix.len(), 4);
    assert!(mix.iter().all(|l| l.contains(",true,0,0,")), "{files}");
}

#[test]
fn a_duration_run_cycles_write_read_delete_until_the_time_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let target = common::disk_tempdir();
    let profile = "name = \"soak\"\ndescription = \"short soak\"\nkind = \"files\"\n[files]\nduration = \"2s\"\ntotal = \"24MB\"\nmin_size = \"4MB\"\nmax_size = \"8MB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\", \"read\"]\nverify = true\n";
    let started = std::time::Instant::now();
    let (out, summary) = run(dir.path(), profile, target.path().to_str().unwrap(), &[]);
    let took = started.elapsed().as_secs_f64();
    let r = result(&summary, "duration");
    let cycles = r["full_cycles"].as_u64().unwrap();
    assert!(cycles >= 2, "{r}");
    assert!(r["elapsed_s"].as_f64().unwrap() >= 2.0, "{r}");
    assert!(took < 30.0, "{took} s");
    assert_eq!(r["corrupt_bytes"], 0);
    assert_eq!(r["bytes_read"], r["bytes_written"], "{r}");
    // Each cycle's files have their own numbers; every one written was read back.
    let files = std::fs::read_to_string(out.join("files.csv")).unwrap();
    let idx = |phase: &str| -> Vec<u64> {
        files
            .lines()
            .filter(|l| l.split(',').nth(1) == Some(phase))
            .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
            .collect()
    };
    let (mut w, mut rd) = (idx("write"), idx("read"));
    let n = w.len();
    w.sort_unstable();
    w.dedup();
    assert_eq!(w.len(), n, "file numbers repeat across cycles");
    rd.sort_unstable();
    assert_eq!(w, rd);
    // The files of every cycle are gone, and the test directory with them.
    let left: Vec<_> = std::fs::read_dir(target.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_unparsable_duration_is_refused_naming_file_key_and_value_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = common::disk_tempdir();
    let prof = dir.path().join("soak.toml");
    std::fs::write(
        &prof,
        "name = \"soak\"\nkind = \"files\"\n[files]\nduration = \"eight hours\"\nmin_size = \"4MB\"\nmax_size = \"8MB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n",
    )
    .unwrap();
    let out = dir.path().join("run");
    let res = common::hostd()
        .args(["run", "-q", "--profile"])
        .arg(&prof)
        .arg("--target")
        .arg(target.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(!res.status.success());
    assert!(
        err.contains(prof.to_str().unwrap())
            && err.contains("duration")
            && err.contains("`eight hours` is not a duration"),
        "{err}"
    );
    assert!(!out.exists(), "a run directory was created");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}
