//! `hostd verify RUN_DIR`: re-read the test files a run kept (`--keep`) and
//! locate every corrupt byte — a retention check after the drive was stored,
//! unplugged or power-cycled. The expected bytes are regenerated from the
//! manifest's seed, target index and file number. The result is appended to
//! the run directory as `verify-<UTC time>.json`; nothing else there is touched.

use anyhow::{bail, Context};
use hostd_records::certify::{VerifiedFile, VerifyResult};
use hostd_workload::block::{BlockCodec, DataPool};
use hostd_workload::reverify;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `hostd verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The run directory of a run made with `--keep`.
    pub run_dir: PathBuf,
    /// Most bad bytes listed per file in the result file (all are counted).
    #[arg(long, default_value_t = 1_000_000)]
    pub max_listed: usize,
}

/// Runs `hostd verify`: exit 0 clean, 3 corruption found.
pub fn execute(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let path = args.run_dir.join(hostd_records::manifest::FILE_NAME);
    let m = hostd_records::manifest::read(&args.run_dir)?;
    let raw = m.targets.iter().any(|t| t.scheme == "raw");
    if !raw && !m.keep {
        bail!(
            "{} key keep = false: the run removed its test files; only a run made with --keep can be verified later",
            path.display(),
        );
    }
    let pool = DataPool::new(m.seed);
    let mut per_file = Vec::new();
    for (ti, t) in m.targets.iter().enumerate() {
        if t.scheme == "raw" {
            let dev = t.path.as_str();
            for (file, base, len) in raw_extents(&m, &path, ti)? {
                let codec = BlockCodec::new(pool.clone(), ti as u32, file);
                let c =
                    reverify::check_range(Path::new(dev), base, Some(len), &codec, args.max_listed)
                        .with_context(|| format!("cannot read {dev}"))?;
                per_file.push(VerifiedFile {
                    target_index: ti,
                    path: format!("{dev} f{file:05} (device offset {base})"),
                    bytes: c.bytes,
                    corrupt_blocks: c.corrupt_blocks,
                    corrupt_bytes: c.corrupt_bytes,
                    direct_io: c.direct_io,
                    bad: c.bad,
                });
            }
            continue;
        }
        let Some(dir) = t.test_dir.as_deref() else {
            bail!(
                "{} key targets[{ti}].test_dir is absent: target {} kept no test directory",
                path.display(),
                t.label
            );
        };
        for (file, p) in test_files(Path::new(dir))? {
            let codec = BlockCodec::new(pool.clone(), ti as u32, file);
            let c = reverify::check_file(&p, &codec, args.max_listed)
                .with_context(|| format!("cannot read {}", p.display()))?;
            per_file.push(VerifiedFile {
                target_index: ti,
                path: p.display().to_string(),
                bytes: c.bytes,
                corrupt_blocks: c.corrupt_blocks,
                corrupt_bytes: c.corrupt_bytes,
                direct_io: c.direct_io,
                bad: c.bad,
            });
        }
    }
    if per_file.is_empty() {
        bail!(
            "no test files (fNNNNN.dat) found for the run in {}",
            path.display()
        );
    }
    let corrupt: u64 = per_file.iter().map(|f| f.corrupt_bytes).sum();
    let result = VerifyResult {
        format_version: hostd_records::certify::FORMAT_VERSION,
        run_id: m.run_id.clone(),
        hostd_version: env!("CARGO_PKG_VERSION").to_string(),
        time_ns: hostd_workload::unix_ns(),
        result: if corrupt == 0 { "clean" } else { "corrupt" }.into(),
        files: per_file.len(),
        bytes: per_file.iter().map(|f| f.bytes).sum(),
        corrupt_bytes: corrupt,
        per_file,
    };
    let out = write_result(&args.run_dir, &result)?;
    outln!(
        "verify: {} files, {} read, {} corrupt bytes",
        result.files,
        hostd_records::units::human_bytes(result.bytes),
        corrupt
    );
    let mut printed = 0;
    for f in result.per_file.iter().filter(|f| f.corrupt_bytes > 0) {
        outln!(
            "  {}: {} corrupt bytes in {} blocks",
            f.path,
            f.corrupt_bytes,
            f.corrupt_blocks
        );
        for b in f.bad.iter().take(100usize.saturating_sub(printed)) {
            outln!(
                "    offset {}: expected 0x{:02x}, found 0x{:02x}",
                b.offset,
                b.expected,
                b.found
            );
            printed += 1;
        }
    }
    if printed == 100 {
        outln!("  (the first 100 bad bytes; all are in {})", out.display());
    }
    if result.per_file.iter().any(|f| !f.direct_io) {
        outln!("note: some files were read through the page cache (direct I/O refused)");
    }
    outln!("result: {} ({})", result.result, out.display());
    Ok(if corrupt == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

/// The test files of raw target `ti` as (file, device offset, length): the
/// run's plan rebuilt from the manifest's profile, seed and recorded capacity,
/// files laid end to end from offset 0 as the run wrote them.
fn raw_extents(
    m: &hostd_records::Manifest,
    path: &Path,
    ti: usize,
) -> anyhow::Result<Vec<(u32, u64, u64)>> {
    use hostd_workload::plan::Plan;
    use hostd_workload::step::Capacity;
    use hostd_workload::TargetSpec;
    let profile = m
        .readable_profile(path)?
        .with_context(|| format!("{} key profile is null", path.display()))?;
    let t = &m.targets[ti];
    let spec = TargetSpec::parse(&t.label, &[]).map_err(anyhow::Error::msg)?;
    let cap = Capacity {
        total: t.capacity_bytes.unwrap_or(0),
        available: t.free_bytes.unwrap_or(0),
    };
    let plan = Plan::build(profile, &[spec], m.seed, &[cap]);
    let mut base = 0;
    let mut out = Vec::new();
    for (i, &len) in plan.targets[0].file_sizes.iter().enumerate() {
        out.push((i as u32, base, len));
        base += len;
    }
    Ok(out)
}

/// The `fNNNNN.dat` files in `dir`, by number.
fn test_files(dir: &Path) -> anyhow::Result<Vec<(u32, PathBuf)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(n) = name
            .strip_prefix('f')
            .and_then(|n| n.strip_suffix(".dat"))
            .and_then(|n| n.parse::<u32>().ok())
        {
            out.push((n, e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Adds `verify-<UTC time>.json` to the run directory (never overwrites).
fn write_result(run_dir: &Path, result: &VerifyResult) -> anyhow::Result<PathBuf> {
    let secs = result.time_ns / 1_000_000_000;
    let (y, mo, d) = super::run::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    let stamp = format!(
        "{y:04}{mo:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    Ok(hostd_records::certify::write_verify_result(
        run_dir, &stamp, result,
    )?)
}
