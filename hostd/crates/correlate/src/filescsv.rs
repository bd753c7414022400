//! Adds the probe's per-file columns to a finished `files.csv`.

use crate::correlate::FileEnergy;
use anyhow::Context;
use std::collections::HashMap;
use std::path::Path;

/// The columns appended to `files.csv`, in order.
pub const PROBE_FILE_COLUMNS: [&str; 12] = [
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

/// Rewrites `path` with the probe columns appended (replacing them if they
/// are already there). Rows are matched by (target, phase, index); rows
/// without a match get empty cells. The file is replaced atomically.
pub fn add_probe_columns(path: &Path, files: &[FileEnergy]) -> anyhow::Result<()> {
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
        let energy = by_key.get(&(&row[ti], &row[pi], index));
        let mut out: Vec<String> = keep.iter().map(|&i| row[i].to_string()).collect();
        match energy {
            Some(f) => out.extend(
                cells(f)
                    .iter()
                    .map(|v| v.map_or(String::new(), |v| format!("{v:.6}"))),
            ),
            None => out.extend(std::iter::repeat_n(String::new(), PROBE_FILE_COLUMNS.len())),
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

    #[test]
    fn appends_columns_matched_by_key_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("files.csv");
        std::fs::write(
            &path,
            "target,phase,index,bytes\nt0,write,0,100\nt0,write,1,200\nt1,write,0,300\n",
        )
        .unwrap();
        let files = [energy("t0", 1, 7.0), energy("t0", 0, 3.0)];
        add_probe_columns(&path, &files).unwrap();
        add_probe_columns(&path, &files).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!("target,phase,index,bytes,{}", PROBE_FILE_COLUMNS.join(","))
        );
        assert!(
            lines[1].starts_with("t0,write,0,100,3.000000,3.000000,,2.500000,"),
            "{}",
            lines[1]
        );
        assert!(lines[2].starts_with("t0,write,1,200,7.000000"));
        assert_eq!(lines[3], format!("t1,write,0,300{}", ",".repeat(12)));
    }
}
