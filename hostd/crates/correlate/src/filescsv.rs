//! Adds the probe's per-file columns to a finished `files.csv`.

use crate::correlate::FileEnergy;
use anyhow::Context;
use std::collections::HashMap;
use std::path::Path;

/// Value of the `probe` column on the rows of targets the probe was not on.
pub const NO_PROBE: &str = "no probe";

/// The columns appended to `files.csv`, in order: `probe` (the probe's id on
/// the probed target's rows, [`NO_PROBE`] on the others), then the figures.
pub const PROBE_FILE_COLUMNS: [&str; 13] = [
    "probe",
    "energy_j",
    "energy_share_j",
    "j_per_gb",
    "mean_power_w",
    "peak_power_w",
    "vbus_v",
    "temp_start_c",
    "temp_end_c",
    "temp_max_c",
    "die_temp_start_c",
    "die_temp_end_c",
    "die_temp_max_c",
];

fn cells(f: &FileEnergy) -> [Option<f64>; 12] {
    [
        f.energy_j,
        f.energy_share_j,
        f.j_per_gb,
        f.mean_power_w,
        f.peak_power_w,
        f.vbus_v,
        f.temp_start_c,
        f.temp_end_c,
        f.temp_max_c,
        f.die_temp_start_c,
        f.die_temp_end_c,
        f.die_temp_max_c,
    ]
}

/// The target the probe was inline with, and what the `probe` column says on its rows.
#[derive(Debug, Clone, Copy)]
pub struct ProbedTarget<'a> {
    /// Target label, as in `files.csv`.
    pub target: &'a str,
    /// The probe's id (or its source, e.g. `sim`, when it gave none).
    pub probe: &'a str,
}

/// Rewrites `path` with the probe columns appended (replacing them if they
/// are already there). Rows are matched by (target, phase, index); rows
/// without a match get empty cells. Rows of other targets than `probed`
/// say [`NO_PROBE`] and get no figures. The file is replaced atomically.
pub fn add_probe_columns(
    path: &Path,
    files: &[FileEnergy],
    probed: ProbedTarget<'_>,
) -> anyhow::Result<()> {
    let by_key: HashMap<(&str, &str, u32), &FileEnergy> = files
        .iter()
        .map(|f| ((f.target.as_str(), f.phase.as_str(), f.index), f))
        .collect();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let header = reader.headers()?.clone();
    let keep: Vec<usize> = (0..header.len())
        .filter(|&i| !PROBE_FILE_COLUMNS.contains(&&header[i]))
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("{} has no column {name}", path.display()))
    };
    let (ti, pi, ii) = (col("target")?, col("phase")?, col("index")?);
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut out: Vec<String> = keep.iter().map(|&i| header[i].to_string()).collect();
    out.extend(PROBE_FILE_COLUMNS.iter().map(|c| c.to_string()));
    writer.write_record(&out)?;
    for row in reader.records() {
        let row = row.with_context(|| format!("bad row in {}", path.display()))?;
        let index: u32 = row[ii].parse().unwrap_or(u32::MAX);
        let on_probe = &row[ti] == probed.target;
        let energy = by_key
            .get(&(&row[ti], &row[pi], index))
            .filter(|_| on_probe);
        let mut out: Vec<String> = keep.iter().map(|&i| row[i].to_string()).collect();
        out.push(if on_probe { probed.probe } else { NO_PROBE }.to_string());
        match energy {
            Some(f) => out.extend(
                cells(f)
                    .iter()
                    .map(|v| v.map_or(String::new(), |v| format!("{v:.6}"))),
            ),
            None => out.extend(std::iter::repeat_n(
                String::new(),
                PROBE_FILE_COLUMNS.len() - 1,
            )),
        }
        writer.write_record(&out)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    crate::write_atomic(path, &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn energy(target: &str, index: u32, e: f64) -> FileEnergy {
        FileEnergy {
            target: target.into(),
            phase: "write".into(),
            index,
            energy_j: Some(e),
            energy_share_j: Some(e),
            j_per_gb: None,
            mean_power_w: Some(2.5),
            peak_power_w: None,
            vbus_v: None,
            temp_start_c: None,
            temp_end_c: None,
            temp_max_c: None,
            die_temp_start_c: None,
            die_temp_end_c: None,
            die_temp_max_c: None,
        }
    }

    const PROBED: ProbedTarget<'static> = ProbedTarget {
        target: "t0",
        probe: "P7",
    };

    #[test]
    fn appends_columns_matched_by_key_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("files.csv");
        std::fs::write(
            &path,
            "target,phase,index,bytes\nt0,write,0,100\nt0,write,1,200\nt1,write,0,300\n",
        )
        .unwrap();
        // t1's figures (were any computed) must not reach its rows: the probe is on t0.
        let files = [
            energy("t0", 1, 7.0),
            energy("t0", 0, 3.0),
            energy("t1", 0, 5.0),
        ];
        add_probe_columns(&path, &files, PROBED).unwrap();
        add_probe_columns(&path, &files, PROBED).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!("target,phase,index,bytes,{}", PROBE_FILE_COLUMNS.join(","))
        );
        assert!(
            lines[1].starts_with("t0,write,0,100,P7,3.000000,3.000000,,2.500000,"),
            "{}",
            lines[1]
        );
        assert!(lines[2].starts_with("t0,write,1,200,P7,7.000000"));
        assert_eq!(
            lines[3],
            format!("t1,write,0,300,no probe{}", ",".repeat(12))
        );
    }

    #[test]
    fn rewritten_files_csv_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("files.csv");
        std::fs::write(&path, "target,phase,index\nt0,write,0\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        add_probe_columns(&path, &[energy("t0", 0, 1.0)], PROBED).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "files.csv is read by other tools and people");
    }
}
