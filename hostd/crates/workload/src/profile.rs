//! Workload profiles: TOML files (built in or the user's) describing what to
//! write and read. See `fixtures/profiles/` for the built-in ones.
//!
//! The types are [`hostd_records::profile`]'s (the manifest records the profile, so its
//! readers share the one schema); they are re-exported here. What a profile does —
//! loading a built-in or a file, parsing, checking its values, printing it as TOML — is
//! [`ProfileExt`].

pub mod certify;

use hostd_records::profile::{Kind, PhaseKind, Profile};
use hostd_records::units::ByteSize;
use std::path::{Path, PathBuf};

/// Block sizes and file sizes must be multiples of this for direct I/O.
pub const ALIGN: u64 = 4096;
/// The deepest queue a profile may ask for.
pub const MAX_QUEUE_DEPTH: usize = 64;

/// The built-in profiles, name and TOML text.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "quick",
        include_str!("../../../../fixtures/profiles/quick.toml"),
    ),
    (
        "stibium-160",
        include_str!("../../../../fixtures/profiles/stibium-160.toml"),
    ),
    (
        "sustained-100GB",
        include_str!("../../../../fixtures/profiles/sustained-100GB.toml"),
    ),
    (
        "fill-90",
        include_str!("../../../../fixtures/profiles/fill-90.toml"),
    ),
    (
        "diskmark",
        include_str!("../../../../fixtures/profiles/diskmark.toml"),
    ),
    (
        "video",
        include_str!("../../../../fixtures/profiles/video.toml"),
    ),
    (
        "cache-recovery",
        include_str!("../../../../fixtures/profiles/cache-recovery.toml"),
    ),
    (
        "paced-sweep",
        include_str!("../../../../fixtures/profiles/paced-sweep.toml"),
    ),
    (
        "diskmark-mixed",
        include_str!("../../../../fixtures/profiles/diskmark-mixed.toml"),
    ),
    (
        "soak-8h",
        include_str!("../../../../fixtures/profiles/soak-8h.toml"),
    ),
    (
        "certify",
        include_str!("../../../../fixtures/profiles/certify.toml"),
    ),
    (
        "fill-states",
        include_str!("../../../../fixtures/profiles/fill-states.toml"),
    ),
];

/// What a profile is wrong about, with where it came from.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Neither a built-in name nor an existing file.
    #[error("unknown profile `{name}`: not a built-in ({builtins}) and no such file")]
    Unknown {
        /// What the user asked for.
        name: String,
        /// The built-in names, comma separated.
        builtins: String,
    },
    /// The file could not be read.
    #[error("cannot read profile {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// TOML syntax or schema error (message carries line and column).
    #[error("profile {origin} is malformed: {message}")]
    Malformed {
        /// File path or `built-in NAME`.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// Parsed, but the values make no sense.
    #[error("profile {origin} is invalid: {message}")]
    Invalid {
        /// File path or `built-in NAME`.
        origin: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// What `hostd` does with a [`Profile`]: load it by name or path, parse and check it,
/// print it. (An extension trait: the type is `hostd_records`', which knows no TOML and
/// no built-ins.)
pub trait ProfileExt: Sized {
    /// Loads a built-in profile by name, or a TOML file by path.
    fn load(name_or_path: &str) -> Result<Self, ProfileError>;
    /// All built-in profiles, parsed.
    fn builtins() -> Vec<Self>;
    /// Parses and checks TOML text; `origin` names it in errors.
    fn parse(text: &str, origin: &str) -> Result<Self, ProfileError>;
    /// Checks values that TOML types cannot express (a profile read from elsewhere, e.g.
    /// a manifest); `origin` names it in the error.
    fn check(&self, origin: &str) -> Result<(), ProfileError>;
    /// The profile as TOML (what `hostd profiles` prints).
    fn to_toml(&self) -> String;
}

impl ProfileExt for Profile {
    fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text, &format!("built-in `{name_or_path}`"));
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return Err(ProfileError::Unknown {
                name: name_or_path.to_string(),
                builtins: BUILTIN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Profile::parse(&text, &path.display().to_string())
    }

    fn builtins() -> Vec<Profile> {
        BUILTIN
            .iter()
            .map(|(n, t)| Profile::parse(t, n).expect("built-in profiles are valid"))
            .collect()
    }

    fn parse(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        let profile: Profile = toml::from_str(text).map_err(|e| ProfileError::Malformed {
            origin: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        profile.check(origin)?;
        Ok(profile)
    }

    fn check(&self, origin: &str) -> Result<(), ProfileError> {
        validate(self).map_err(|message| ProfileError::Invalid {
            origin: origin.to_string(),
            message,
        })
    }

    fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}

/// Checks values that TOML types cannot express.
fn validate(p: &Profile) -> Result<(), String> {
    check_block(p.io.block_size, "[io] block_size")?;
    check_qd(p.io.queue_depth, "[io] queue_depth")?;
    if p.io.phases.is_empty() {
        return Err("[io] phases is empty: give at least one of \"write\", \"read\"".into());
    }
    if let Some(g) = &p.temperature_gate {
        check_temperature_gate(g)?;
    }
    if let Some(ss) = &p.steady_state {
        match (p.kind, &p.paced_sweep) {
            (Kind::Fill, _) if p.io.phases != [PhaseKind::Write] => {
                return Err("[steady_state] on kind = \"fill\" ends the fill early: give [io] phases = [\"write\"] (the files it did not write cannot be read back)".into())
            }
            (Kind::Fill, _) => {
                crate::steady::SteadySpec::new(ss, None)?;
            }
            (Kind::PacedSweep, Some(sweep)) => {
                crate::steady::SteadySpec::new(ss, Some(sweep.step_time.0))?;
            }
            (Kind::Files, _) if p.files.as_ref().and_then(|f| f.duration).is_some() => {
                let d = p.files.as_ref().and_then(|f| f.duration).map(|d| d.0);
                crate::steady::SteadySpec::new(ss, d)?;
            }
            _ => {
                return Err(format!(
                    "[steady_state] applies to kind = \"fill\", kind = \"paced-sweep\" and a soak (kind = \"files\" with [files] duration), not {:?}",
                    p.kind
                ))
            }
        }
    }
    certify::validate(
        p.kind == Kind::Certify,
        p.certify.as_ref(),
        p.gates.as_ref(),
    )?;
    match p.kind {
        Kind::Certify => {
            if !p.io.verify || p.io.phases != [PhaseKind::Write, PhaseKind::Read] {
                return Err("kind = \"certify\" writes then verifies every block: give [io] phases = [\"write\", \"read\"] and verify = true".into());
            }
        }
        Kind::Files => {
            let f = p
                .files
                .as_ref()
                .ok_or("kind = \"files\" needs a [files] section")?;
            if let Some(d) = f.duration {
                crate::profile_programs::validate_duration(d)?;
            }
            match (f.count, f.total) {
                (Some(0), _) => return Err("[files] count must be at least 1".into()),
                (Some(_), Some(_)) => {
                    return Err("[files] give either count or total, not both".into())
                }
                (None, None) if f.duration.is_none() => {
                    return Err("[files] needs count, total or duration".into())
                }
                (None, Some(t)) if t.0 == 0 => {
                    return Err("[files] total must be more than 0".into())
                }
                (Some(n), _) if n > MAX_FILES => {
                    return Err(format!("[files] count {n} is above {MAX_FILES}"))
                }
                (None, Some(t)) if t.0 / f.min_size.0.max(ALIGN) > MAX_FILES as u64 => {
                    return Err(format!(
                        "[files] total {t} would take more than {MAX_FILES} files of min_size {}",
                        f.min_size
                    ))
                }
                _ => {}
            }
            if f.max_size.0 > MAX_FILE_SIZE {
                return Err(format!("[files] max_size {} is above 1 TiB", f.max_size));
            }
            if f.min_size.0 < ALIGN {
                return Err(format!("[files] min_size {} is below 4 KiB", f.min_size));
            }
            if f.min_size > f.max_size {
                return Err(format!(
                    "[files] min_size {} is larger than max_size {}",
                    f.min_size, f.max_size
                ));
            }
        }
        Kind::Fill => {
            let f = p
                .fill
                .as_ref()
                .ok_or("kind = \"fill\" needs a [fill] section")?;
            if !(f.fraction > 0.0 && f.fraction < 1.0) {
                return Err(format!(
                    "[fill] fraction {} must be between 0 and 1",
                    f.fraction
                ));
            }
            if f.file_size.0 < ALIGN {
                return Err("[fill] file_size is below 4 KiB".into());
            }
        }
        Kind::Diskmark => {
            let d = p
                .diskmark
                .as_ref()
                .ok_or("kind = \"diskmark\" needs a [diskmark] section")?;
            if d.tests.is_empty() || d.repetitions == 0 {
                return Err("[diskmark] needs at least one test and one repetition".into());
            }
            if d.file_size.0 < ALIGN {
                return Err("[diskmark] file_size is below 4 KiB".into());
            }
            for t in &d.tests {
                check_block(
                    t.block_size,
                    &format!("[diskmark] test {} block_size", t.name),
                )?;
                check_qd(
                    t.queue_depth,
                    &format!("[diskmark] test {} queue_depth", t.name),
                )?;
                if t.read_percent.is_some_and(|p| p > 100) {
                    return Err(format!(
                        "[diskmark] test {} read_percent = {} must be 0 to 100",
                        t.name,
                        t.read_percent.unwrap_or_default()
                    ));
                }
                if t.block_size > d.file_size {
                    return Err(format!(
                        "[diskmark] test {} block is larger than the file",
                        t.name
                    ));
                }
            }
        }
        Kind::Video => {
            let v = p
                .video
                .as_ref()
                .ok_or("kind = \"video\" needs a [video] section")?;
            if !(v.fps > 0.0 && v.fps <= 1000.0) {
                return Err(format!("[video] fps {} must be in (0, 1000]", v.fps));
            }
            if v.seconds.is_nan() || v.seconds <= 0.0 || v.clips == 0 || v.frame_size.0 == 0 {
                return Err("[video] seconds, clips and frame_size must be positive".into());
            }
            if v.seconds > MAX_VIDEO_SECONDS || v.clips > MAX_FILES {
                return Err(format!(
                    "[video] seconds must be at most {MAX_VIDEO_SECONDS} and clips at most {MAX_FILES}"
                ));
            }
            let frames = (v.seconds * v.fps).ceil() as u64;
            if frames
                .checked_mul(v.frame_size.0)
                .is_none_or(|clip| clip > MAX_FILE_SIZE)
            {
                return Err(format!(
                    "[video] a clip of {} s at {} fps with {} frames is above 1 TiB",
                    v.seconds, v.fps, v.frame_size
                ));
            }
        }
        Kind::CacheRecovery => crate::profile_programs::validate_cache_recovery(
            p.cache_recovery
                .as_ref()
                .ok_or("kind = \"cache-recovery\" needs a [cache_recovery] section")?,
            p.io.block_size,
        )?,
        Kind::PacedSweep => crate::profile_programs::validate_paced_sweep(
            p.paced_sweep
                .as_ref()
                .ok_or("kind = \"paced-sweep\" needs a [paced_sweep] section")?,
            p.io.block_size,
        )?,
        Kind::FillStates => crate::plan_fill_states::validate(
            p.fill_states
                .as_ref()
                .ok_or("kind = \"fill-states\" needs a [fill_states] section")?,
            p.io.block_size,
        )?,
    }
    Ok(())
}

/// Most files (or video clips) one target may plan; keeps a mistyped profile
/// from allocating gigabytes before the free-space check can refuse it.
const MAX_FILES: u32 = 1_000_000;
/// Largest single file (or video clip) a profile may ask for.
const MAX_FILE_SIZE: u64 = 1 << 40;
/// Longest video clip: one day.
const MAX_VIDEO_SECONDS: f64 = 86_400.0;

/// Longest wait at one temperature gate: a day.
const MAX_GATE_TIMEOUT_S: f64 = 86_400.0;

fn check_temperature_gate(g: &hostd_records::profile::TemperatureGate) -> Result<(), String> {
    if !(g.margin_c.is_finite() && g.margin_c > 0.0) {
        return Err(format!(
            "[temperature_gate] margin_c = {} must be above 0 °C (no reading is ever exactly the idle temperature)",
            g.margin_c
        ));
    }
    if !(g.timeout_s.is_finite() && g.timeout_s > 0.0 && g.timeout_s <= MAX_GATE_TIMEOUT_S) {
        return Err(format!(
            "[temperature_gate] timeout_s = {} must be above 0 and at most {MAX_GATE_TIMEOUT_S} s",
            g.timeout_s
        ));
    }
    if let Some(idle) = g.idle_c {
        if !(-40.0..=125.0).contains(&idle) {
            return Err(format!(
                "[temperature_gate] idle_c = {idle} must be between -40 and 125 °C"
            ));
        }
    }
    Ok(())
}

fn check_block(b: ByteSize, what: &str) -> Result<(), String> {
    if b.0 == 0 || !b.0.is_multiple_of(ALIGN) {
        return Err(format!(
            "{what} {b} must be a positive multiple of 4 KiB (direct I/O)"
        ));
    }
    if b.0 > 64 << 20 {
        return Err(format!("{what} {b} is above 64 MiB"));
    }
    Ok(())
}

fn check_qd(qd: usize, what: &str) -> Result<(), String> {
    if qd == 0 || qd > MAX_QUEUE_DEPTH {
        return Err(format!(
            "{what} {qd} must be between 1 and {MAX_QUEUE_DEPTH}"
        ));
    }
    Ok(())
}

/// Rounds `n` up to a multiple of 4 KiB.
pub fn align_up(n: u64) -> u64 {
    n.div_ceil(ALIGN) * ALIGN
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::manifest::{self, Manifest};

    #[test]
    fn every_builtin_profile_reads_back_from_a_manifest_as_written() {
        let d = tempfile::tempdir().unwrap();
        for p in Profile::builtins() {
            let mut m = Manifest::new("r", 1, Vec::new());
            m.profile = Some(p.clone().into());
            manifest::write(d.path(), &m).unwrap();
            let back = manifest::read(d.path()).unwrap();
            // Typed again, not kept as written: this build reads what it writes.
            let typed = back.readable_profile(std::path::Path::new(manifest::FILE_NAME));
            assert_eq!(typed.unwrap(), Some(&p), "{}", p.name);
            assert_eq!(back.profile_name(), Some(p.name.as_str()));
            p.check("manifest").unwrap();
        }
    }

    #[test]
    fn a_temperature_gate_with_no_margin_or_no_timeout_is_refused_naming_key_and_value() {
        let gate = |body: &str| {
            let text = format!(
                "{}\n[temperature_gate]\nsource = \"probe\"\n{body}\n",
                BUILTIN.iter().find(|(n, _)| *n == "quick").unwrap().1
            );
            Profile::parse(&text, "t.toml")
        };
        let g = gate("margin_c = 1.5\ntimeout_s = 60").unwrap();
        let g = g.temperature_gate.unwrap();
        assert_eq!((g.margin_c, g.timeout_s, g.idle_c), (1.5, 60.0, None));
        assert_eq!(g.at, hostd_records::profile::GateAt::Step);
        for (body, key) in [
            ("margin_c = 0\ntimeout_s = 60", "margin_c = 0 "),
            ("margin_c = -1\ntimeout_s = 60", "margin_c = -1 "),
            ("margin_c = 1\ntimeout_s = 0", "timeout_s = 0 "),
            (
                "margin_c = 1\ntimeout_s = 60\nidle_c = 300",
                "idle_c = 300 ",
            ),
        ] {
            let e = gate(body).unwrap_err().to_string();
            assert!(
                e.contains("t.toml") && e.contains(&format!("[temperature_gate] {key}")),
                "{body}: {e}"
            );
        }
        let e = gate("margin_c = 1\ntimeout_s = 6\nsource2 = 1").unwrap_err();
        assert!(e.to_string().contains("source2"), "{e}");
    }

    #[test]
    fn a_steady_state_section_is_checked_against_its_step_and_its_kind() {
        let with = |name: &str, extra: &str, section: &str| {
            let text = BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1;
            Profile::parse(
                &format!(
                    "{}\n{extra}\n[steady_state]\n{section}\n",
                    text.replace("phases = [\"write\", \"read\"]", "phases = [\"write\"]")
                ),
                "t.toml",
            )
        };
        let ok = with(
            "paced-sweep",
            "",
            "criteria = [\"bw:10%\"]\nwindow = \"30s\"\nramp = \"10s\"",
        )
        .unwrap();
        assert_eq!(ok.steady_state.unwrap().criteria, ["bw:10%"]);
        // paced-sweep's steps are 60 s: a 50 s window after a 20 s ramp cannot end one.
        let e = with(
            "paced-sweep",
            "",
            "criteria = [\"bw:10%\"]\nwindow = \"50s\"\nramp = \"20s\"",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("t.toml") && e.contains("[steady_state] window = \"50s\""),
            "{e}"
        );
        assert!(e.contains("longer than the step (1m)"), "{e}");
        let e = with("fill-90", "", "criteria = [\"lat:1%\"]\nwindow = \"30s\"").unwrap_err();
        assert!(e.to_string().contains("\"lat:1%\""), "{e}");
        assert!(with(
            "fill-90",
            "",
            "criteria = [\"bw_slope:0.5%\"]\nwindow = \"30s\""
        )
        .is_ok());
        let e = with("fill-90", "", "criteria = [\"bw:5%\"]\nwindow = \"2s\"").unwrap_err();
        assert!(e.to_string().contains("window = \"2s\""), "{e}");
        let e = with("quick", "", "criteria = [\"bw:5%\"]\nwindow = \"10s\"").unwrap_err();
        assert!(e.to_string().contains("applies to kind = \"fill\""), "{e}");
        // A soak may end at steady state; its window must fit in its duration.
        assert!(with("soak-8h", "", "criteria = [\"bw:5%\"]\nwindow = \"10m\"").is_ok());
        let soak = BUILTIN.iter().find(|(n, _)| *n == "soak-8h").unwrap().1;
        let short = Profile::parse(
            &format!(
                "{}\n[steady_state]\ncriteria = [\"bw:5%\"]\nwindow = \"2h\"\n",
                soak.replace("duration = \"8h\"", "duration = \"1h\"")
            ),
            "t.toml",
        )
        .unwrap_err();
        assert!(
            short.to_string().contains("[steady_state] window = \"2h\""),
            "{short}"
        );
    }

    #[test]
    fn a_recorded_profile_with_values_out_of_range_fails_the_check_naming_its_origin() {
        let mut p = Profile::load("quick").unwrap();
        p.io.queue_depth = 0;
        let e = p
            .check("run/manifest.json key profile")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("run/manifest.json key profile is invalid") && e.contains("queue_depth"),
            "{e}"
        );
    }
}
