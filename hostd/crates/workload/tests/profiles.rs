//! The profile parser: built-ins are valid, malformed files give errors that
//! say what and where.

use hostd_records::profile::Profile;
use hostd_workload::profile::{ProfileError, ProfileExt};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/profiles")
        .join(name)
}

#[test]
fn every_builtin_parses_and_matches_its_fixture_file() {
    let names: Vec<String> = Profile::builtins().into_iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "quick",
            "stibium-160",
            "sustained-100GB",
            "fill-90",
            "diskmark",
            "video",
            "cache-recovery",
            "paced-sweep",
            "diskmark-mixed",
            "soak-8h",
            "certify",
            "fill-states"
        ]
    );
    for n in &names {
        let from_file = Profile::load(fixture(&format!("{n}.toml")).to_str().unwrap()).unwrap();
        assert_eq!(&from_file.name, n);
    }
}

#[test]
fn unknown_profile_names_the_builtins() {
    let e = Profile::load("no-such-profile").unwrap_err();
    assert!(matches!(e, ProfileError::Unknown { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains("no-such-profile") && msg.contains("stibium-160"),
        "{msg}"
    );
}

fn malformed(name: &str) -> String {
    let path = fixture(&format!("malformed/{name}"));
    let e = Profile::load(path.to_str().unwrap()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains(name), "error should name the file: {msg}");
    msg
}

/// One test per malformed fixture: loading it fails with an error that names the file and
/// contains every listed piece.
macro_rules! malformed_cases {
    ($($name:ident: $file:literal => [$($want:literal),+];)+) => {
        $(
            #[test]
            fn $name() {
                let m = malformed($file);
                for want in [$($want),+] {
                    assert!(m.contains(want), "{want:?} not in: {m}");
                }
            }
        )+
    };
}

malformed_cases! {
    syntax_error_reports_the_line: "syntax-error.toml" => ["malformed", "line 3"];
    unknown_key_is_named: "unknown-key.toml" => ["max_szie"];
    bad_size_is_quoted: "bad-size.toml" => ["2 parsecs"];
    inverted_range_is_explained: "min-above-max.toml" => ["min_size", "larger than max_size"];
    queue_depth_limit_is_stated:
        "queue-depth-too-deep.toml" => ["queue_depth 1000", "between 1 and 64"];
    missing_section_is_named: "missing-section.toml" => ["needs a [fill] section"];
    unknown_kind_lists_the_kinds: "unknown-kind.toml" => ["teleport", "files"];
    unknown_phase_is_named: "unknown-phase.toml" => ["erase"];
    endless_video_clip_is_refused_not_overflowed:
        "endless-video.toml" => ["[video] seconds must be at most"];
    file_count_is_bounded: "billions-of-files.toml" => ["count", "1000000"];
    unparsable_duration_names_the_file_key_and_value:
        "bad-duration.toml" => ["duration", "`eight hours` is not a duration"];
    a_zero_pause_is_refused: "zero-pause.toml" => ["[cache_recovery] pauses", "0s"];
    a_sweep_without_its_section_is_named:
        "sweep-without-section.toml" => ["needs a [paced_sweep] section"];
    a_read_share_above_100_percent_is_refused: "mix-over-100.toml" => ["read_percent = 170"];
}

#[test]
fn unreadable_profile_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let e = Profile::load(dir.path().to_str().unwrap()).unwrap_err();
    assert!(matches!(e, ProfileError::Read { .. }), "{e}");
}
