//! `hostd pd-decode` as a lab runs it, on sigrok session files made here from the real
//! captures of `fixtures/usb-pd/` (their edges back into samples, at their sample rate):
//! every message line is the message sigrok decoded, in order (time, ordered set, type,
//! MessageID), then the contract and the counters; `--channel` and `--json` pick and say
//! the same.

use hostd_pd::fixture::{kind_name_of_sigrok, EdgeFile, SigrokDecoding};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixture(name: &str, ext: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/usb-pd")
        .join(format!("{name}{ext}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// sigrok's rate text for a fixture's clock (`2.4 MHz`).
fn rate_text(hz: u32) -> String {
    format!("{} MHz", f64::from(hz) / 1e6)
}

/// A session file `dir/NAME.sr` of one byte a sample: the fixture's line in bit
/// `bit` (probe `bit + 1`), the other probes held low; `probes` names them in order. The
/// samples go in chunks of 100 000 (logic-1-1, … logic-1-10, …), deflated, as sigrok
/// writes them.
fn write_session(dir: &Path, edges: &EdgeFile, probes: &[&str], bit: u8) -> PathBuf {
    let mut samples = vec![0u8; edges.samples as usize];
    let mut level = edges.initial_level;
    let mut from = 0usize;
    for t in edges
        .edges
        .iter()
        .map(|&t| t as usize)
        .chain([samples.len()])
    {
        if level {
            samples[from..t].iter_mut().for_each(|s| *s |= 1 << bit);
        }
        (from, level) = (t, !level);
    }
    let mut metadata = format!(
        "[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n\
         total probes={}\nsamplerate={}\ntotal analog=0\n",
        probes.len(),
        rate_text(edges.clock_hz)
    );
    for (i, p) in probes.iter().enumerate() {
        metadata.push_str(&format!("probe{}={p}\n", i + 1));
    }
    metadata.push_str("unitsize=1\n");
    let path = dir.join("capture.sr");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("version", opts).unwrap();
    zip.write_all(b"2").unwrap();
    zip.start_file("metadata", opts).unwrap();
    zip.write_all(metadata.as_bytes()).unwrap();
    for (i, chunk) in samples.chunks(100_000).enumerate() {
        zip.start_file(format!("logic-1-{}", i + 1), opts).unwrap();
        zip.write_all(chunk).unwrap();
    }
    zip.finish().unwrap();
    path
}

fn hostd(args: &[&str], file: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_hostd"))
        .arg("pd-decode")
        .arg(file)
        .args(args)
        .output()
        .expect("hostd runs")
}

fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "hostd pd-decode failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The message lines (`   17397.08 µs  SOP  Source_Capabilities  id 0  …`) as
/// (µs, ordered set, type, id).
fn message_lines(text: &str) -> Vec<(f64, String, String, u8)> {
    text.lines()
        .filter(|l| l.contains(" µs  ") && l.starts_with(' '))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w[1], "µs", "{l}");
            assert_eq!(w[4], "id", "{l}");
            (
                w[0].parse().unwrap(),
                w[2].to_string(),
                w[3].to_string(),
                w[5].parse().unwrap(),
            )
        })
        .collect()
}

/// sigrok's packets as (µs, ordered set, type, id), in the tool's names.
fn sigrok_lines(name: &str, clock_hz: u32) -> Vec<(f64, String, String, u8)> {
    let want = SigrokDecoding::parse(&fixture(name, ".sigrok.txt")).unwrap();
    assert!(want.packets.iter().all(|p| !p.sop.is_reset()));
    (want.packets.iter())
        .map(|p| {
            (
                p.start as f64 * 1e6 / f64::from(clock_hz),
                p.sop.name().to_string(),
                kind_name_of_sigrok(&p.type_name).unwrap().to_string(),
                p.id.unwrap(),
            )
        })
        .collect()
}

fn assert_same_messages(
    got: &[(f64, String, String, u8)],
    want: &[(f64, String, String, u8)],
    name: &str,
) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g.0 - w.0).abs() < 0.006,
            "{name}: message {i}: at {} µs, sigrok {}",
            g.0,
            w.0
        );
        assert_eq!((&g.1, &g.2, g.3), (&w.1, &w.2, w.3), "{name}: message {i}");
    }
    assert_eq!(got.len(), want.len(), "{name}: messages");
}

/// A 2.4 MHz capture (times that are no whole µs) on the second probe: the first channel
/// with traffic is found, each line is sigrok's message, the 14.8 V contract follows.
#[test]
fn each_message_line_is_sigrok_s_message_then_the_contract() {
    let name = "macbook_2015-apple_power_brick.cc1";
    let edges = EdgeFile::parse(&fixture(name, ".edges")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sr = write_session(dir.path(), &edges, &["D0", "CC1"], 1);
    let text = stdout_ok(&hostd(&[], &sr));
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with(
            "2.4 MHz, 835561 samples (348.15 ms); channel CC1 (probe 2), the first with PD traffic"
        ),
        "{text}"
    );
    assert_same_messages(
        &message_lines(&text),
        &sigrok_lines(name, edges.clock_hz),
        name,
    );
    let tail: Vec<&str> = text.lines().rev().take(2).collect();
    assert_eq!(
        tail[1], "contract: 14.8V 2A (29.6W) from Fixed PDO 2, since 272806.25 µs",
        "{text}"
    );
    assert!(
        tail[0].starts_with(
            "counters: 61 messages (61 SOP), 0 CRC failures, 0 bad symbols, 0 bursts without SOP;"
        ),
        "{text}"
    );
    // The Request names the PDO it asks for and its currents.
    assert!(
        text.contains("Request              id 0  SNK/UFP r2  PDO 2 = Fixed 14.8V 2A (29.6W): 2A operating, 2A max"),
        "{text}"
    );
}

/// `--channel` by name and by number, `--json` with the same messages and contract, and a
/// channel that is not there.
#[test]
fn channel_choice_and_json() {
    let name = "thinkpad_yoga_370-aukey_45w.cc2";
    let edges = EdgeFile::parse(&fixture(name, ".edges")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sr = write_session(dir.path(), &edges, &["CC1", "CC2"], 1);
    let want = sigrok_lines(name, edges.clock_hz);

    let by_number = stdout_ok(&hostd(&["--channel", "2"], &sr));
    assert!(by_number
        .lines()
        .next()
        .unwrap()
        .ends_with("channel CC2 (probe 2)"));
    assert_same_messages(&message_lines(&by_number), &want, name);
    assert!(
        by_number.contains("contract: 20V 2.25A (45W) from Fixed PDO 5, since 244163.75 µs"),
        "{by_number}"
    );

    let silent = stdout_ok(&hostd(&["--channel", "cc1"], &sr));
    assert!(message_lines(&silent).is_empty(), "{silent}");
    assert!(silent.contains("contract: none (no explicit contract made in the capture)"));

    let out = hostd(&["--json"], &sr);
    let v: serde_json::Value = serde_json::from_str(&stdout_ok(&out)).expect("one JSON document");
    assert_eq!(v["channel"]["name"], "CC2");
    assert_eq!(v["samplerate_hz"], 4_000_000);
    let got: Vec<(f64, String, String, u8)> = (v["messages"].as_array().unwrap().iter())
        .map(|m| {
            (
                m["t_us"].as_f64().unwrap(),
                m["sop"].as_str().unwrap().to_string(),
                m["type"].as_str().unwrap().to_string(),
                m["id"].as_u64().unwrap() as u8,
            )
        })
        .collect();
    assert_same_messages(&got, &want, name);
    let caps = &v["messages"][0]["pdos"];
    assert_eq!(caps.as_array().unwrap().len(), 6, "{caps}");
    assert_eq!(caps[5]["supply"], "PPS");
    assert_eq!(v["messages"][2]["request"]["position"], 5);
    let c = &v["contract"];
    assert_eq!(
        (&c["mv"], &c["ma"], &c["mw"]),
        (&20_000.into(), &2_250.into(), &45_000.into())
    );
    assert_eq!(v["counters"]["crc_failures"], 0);
    assert_eq!(v["counters"]["bursts_without_sop"], 0);

    let missing = hostd(&["--channel", "CC7"], &sr);
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("CC1 (probe 1), CC2 (probe 2)"), "{err}");
}
