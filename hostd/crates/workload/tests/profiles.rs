//! The profile parser: built-ins are valid, malformed files give errors that
//! say what and where.

use hostd_workload::profile::{Profile, ProfileError};
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
            "certify"
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

#[test]
fn syntax_error_reports_the_line() {
    let m = malformed("syntax-error.toml");
    assert!(m.contains("malformed") && m.contains("line 3"), "{m}");
}

#[test]
fn unknown_key_is_named() {
    let m = malformed("unknown-key.toml");
    assert!(m.contains("max_szie"), "{m}");
}

#[test]
fn bad_size_is_quoted() {
    let m = malformed("bad-size.toml");
    assert!(m.contains("2 parsecs"), "{m}");
}

#[test]
fn inverted_range_is_explained() {
    let m = malformed("min-above-max.toml");
    assert!(
        m.contains("min_size") && m.contains("larger than max_size"),
        "{m}"
    );
}

#[test]
fn queue_depth_limit_is_stated() {
    let m = malformed("queue-depth-too-deep.toml");
    assert!(
        m.contains("queue_depth 1000") && m.contains("between 1 and 64"),
        "{m}"
    );
}

#[test]
fn missing_section_is_named() {
    let m = malformed("missing-section.toml");
    assert!(m.contains("needs a [fill] section"), "{m}");
}

#[test]
fn unknown_kind_lists_the_kinds() {
    let m = malformed("unknown-kind.toml");
    assert!(m.contains("teleport") && m.contains("files"), "{m}");
}

#[test]
fn unknown_phase_is_named() {
    let m = malformed("unknown-phase.toml");
    assert!(m.contains("erase"), "{m}");
}

#[test]
fn unreadable_profile_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let e = Profile::load(dir.path().to_str().unwrap()).unwrap_err();
    assert!(matches!(e, ProfileError::Read { .. }), "{e}");
}

#[test]
fn endless_video_clip_is_refused_not_overflowed() {
    let m = malformed("endless-video.toml");
    assert!(m.contains("[video] seconds must be at most"), "{m}");
}

#[test]
fn file_count_is_bounded() {
    let m = malformed("billions-of-files.toml");
    assert!(m.contains("count") && m.contains("1000000"), "{m}");
}

#[test]
fn unparsable_duration_names_the_file_key_and_value() {
    let m = malformed("bad-duration.toml");
    assert!(
        m.contains("duration") && m.contains("`eight hours` is not a duration"),
        "{m}"
    );
}

#[test]
fn a_zero_pause_is_refused() {
    let m = malformed("zero-pause.toml");
    assert!(
        m.contains("[cache_recovery] pauses") && m.contains("0s"),
        "{m}"
    );
}

#[test]
fn a_sweep_without_its_section_is_named() {
    let m = malformed("sweep-without-section.toml");
    assert!(m.contains("needs a [paced_sweep] section"), "{m}");
}

#[test]
fn a_read_share_above_100_percent_is_refused() {
    let m = malformed("mix-over-100.toml");
    assert!(m.contains("read_percent = 170"), "{m}");
}
