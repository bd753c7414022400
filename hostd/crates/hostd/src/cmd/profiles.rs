//! `hostd profiles`: the built-in workload profiles with their parameters.

use hostd_records::profile::Profile;
use hostd_workload::ProfileExt;
use std::process::ExitCode;

/// Arguments of `hostd profiles`.
#[derive(clap::Args)]
pub struct ProfilesArgs {
    /// Print one profile's full TOML (a starting point for your own file).
    pub name: Option<String>,
}

/// Runs `hostd profiles`.
pub fn execute(args: ProfilesArgs) -> anyhow::Result<ExitCode> {
    if let Some(name) = args.name {
        let p = Profile::load(&name)?;
        out!("{}", p.to_toml());
        return Ok(ExitCode::SUCCESS);
    }
    for p in Profile::builtins() {
        outln!("{:<16} {}", p.name, p.description);
        outln!("{:<16} {}", "", parameters(&p));
    }
    outln!();
    outln!("`hostd profiles NAME` prints a profile's TOML; `hostd run --profile FILE.toml` runs your own.");
    Ok(ExitCode::SUCCESS)
}

fn parameters(p: &Profile) -> String {
    use hostd_records::profile::Kind;
    let io = &p.io;
    let phases: Vec<String> = io
        .phases
        .iter()
        .map(|x| format!("{x:?}").to_lowercase())
        .collect();
    let what = match p.kind {
        Kind::Files => {
            let f = p.files.as_ref().expect("validated");
            let n = match (f.count, f.total) {
                (Some(c), _) => format!("{c} files"),
                (_, Some(t)) => format!("files until {t}"),
                _ => "files to 90 % of the free space".to_string(),
            };
            match f.duration {
                Some(d) => format!(
                    "for {}: cycles of {n} of {}-{} (uniform), deleted after each",
                    d, f.min_size, f.max_size
                ),
                None => format!("{n} of {}-{} (uniform)", f.min_size, f.max_size),
            }
        }
        Kind::Fill => {
            let f = p.fill.as_ref().expect("validated");
            format!(
                "fill to {:.0} % in {} files",
                f.fraction * 100.0,
                f.file_size
            )
        }
        Kind::Diskmark => {
            let d = p.diskmark.as_ref().expect("validated");
            let tests: Vec<&str> = d.tests.iter().map(|t| t.name.as_str()).collect();
            format!("{} x{} on {}", tests.join(", "), d.repetitions, d.file_size)
        }
        Kind::Certify => {
            let c = p.certify.as_ref().expect("validated");
            let gates = toml::to_string(p.gates.as_ref().expect("validated")).unwrap_or_default();
            format!(
                "{} passes of write + verify over {:.0} % of the free space in {} files; gates {}",
                c.passes,
                c.fraction * 100.0,
                c.file_size,
                gates.trim().replace('\n', ", ")
            )
        }
        Kind::Video => {
            let v = p.video.as_ref().expect("validated");
            format!(
                "{} frames at {} fps, {} clips of {} s",
                v.frame_size, v.fps, v.clips, v.seconds
            )
        }
        Kind::CacheRecovery => {
            let c = p.cache_recovery.as_ref().expect("validated");
            let pauses: Vec<String> = c.pauses.iter().map(|d| d.to_string()).collect();
            format!(
                "write {} chunks until the fast stage ends (or {}), idle {} between bursts",
                c.chunk,
                c.limit,
                pauses.join(", ")
            )
        }
        Kind::FillStates => {
            let f = p.fill_states.as_ref().expect("validated");
            let levels: Vec<String> = f.levels.iter().map(|l| format!("{l} %")).collect();
            format!(
                "a {} write in {} files at {} full, verified fill between levels",
                f.write,
                f.file_size,
                levels.join(", ")
            )
        }
        Kind::PacedSweep => {
            let s = p.paced_sweep.as_ref().expect("validated");
            let pc: Vec<String> = s.percents.iter().map(|x| format!("{x} %")).collect();
            format!(
                "unpaced, then {} of that rate, {} each",
                pc.join(", "),
                s.step_time
            )
        }
    };
    format!(
        "{what}; bs {} qd {}; phases {}; verify {}",
        io.block_size,
        io.queue_depth,
        phases.join("+"),
        io.verify
    )
}
