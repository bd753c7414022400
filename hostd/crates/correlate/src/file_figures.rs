//! The probe's per-file figures on the run's file records (`files-probe.csv`, written by
//! `hostd_records::files_probe::write`).

use crate::correlate::FileEnergy;
use hostd_records::files::{FileProbe, FileRecord};
use std::collections::HashMap;

use hostd_records::files::NO_PROBE;

/// The target the probe was inline with, and what the `probe` column says on its rows.
#[derive(Debug, Clone, Copy)]
pub struct ProbedTarget<'a> {
    /// Target label, as in `files.csv`.
    pub target: &'a str,
    /// The probe's id (or its source, e.g. `sim`, when it gave none).
    pub probe: &'a str,
}

/// Sets every record's probe figures (replacing any). Records are matched by (target,
/// phase, index); a probed record without a match gets empty figures. Records of other
/// targets than `probed` say [`NO_PROBE`] and get no figures.
pub fn add_probe_figures(
    files: &mut [FileRecord],
    energy: &[FileEnergy],
    probed: ProbedTarget<'_>,
) {
    let by_key: HashMap<(&str, &str, u32), &FileEnergy> = energy
        .iter()
        .map(|f| ((f.target.as_str(), f.phase.as_str(), f.index), f))
        .collect();
    for r in files.iter_mut() {
        let on_probe = r.target == probed.target;
        let probe = if on_probe { probed.probe } else { NO_PROBE }.to_string();
        let p = match by_key
            .get(&(r.target.as_str(), r.phase.as_str(), r.index))
            .filter(|_| on_probe)
        {
            Some(e) => FileProbe {
                probe,
                ..e.figures.clone()
            },
            None => FileProbe {
                probe,
                ..FileProbe::default()
            },
        };
        r.probe = Some(Box::new(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn energy(target: &str, index: u32, e: f64) -> FileEnergy {
        FileEnergy {
            target: target.into(),
            phase: "write".into(),
            index,
            figures: FileProbe {
                energy_j: Some(e),
                energy_share_j: Some(e),
                mean_power_w: Some(2.5),
                ..FileProbe::default()
            },
        }
    }

    const PROBED: ProbedTarget<'static> = ProbedTarget {
        target: "t0",
        probe: "P7",
    };

    #[test]
    fn figures_go_to_the_probed_targets_rows_by_key_and_the_columns_follow() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = vec![
            FileRecord::new("t0", "write", 0, 0, 10, 100),
            FileRecord::new("t0", "write", 1, 10, 20, 200),
            FileRecord::new("t1", "write", 0, 0, 10, 300),
        ];
        // t1's figures (were any computed) must not reach its rows: the probe is on t0.
        let energy = [
            energy("t0", 1, 7.0),
            energy("t0", 0, 3.0),
            energy("t1", 0, 5.0),
        ];
        add_probe_figures(&mut files, &energy, PROBED);
        add_probe_figures(&mut files, &energy, PROBED);
        // As `hostd run` writes them: files.csv streamed, the figures once at the end.
        let mut w = hostd_records::files::Writer::create(dir.path()).unwrap();
        files.iter().for_each(|f| w.write(f).unwrap());
        drop(w);
        hostd_records::files_probe::write(dir.path(), &files).unwrap();
        let text = std::fs::read_to_string(dir.path().join("files-probe.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "target,phase,index,{}",
                hostd_records::files::PROBE_COLUMNS.join(",")
            )
        );
        assert!(lines[1].starts_with("t0,write,0,P7,"), "{}", lines[1]);
        assert!(
            lines[1].contains(",P7,3.000000,3.000000,,2.500000,"),
            "{}",
            lines[1]
        );
        assert!(lines[2].contains(",P7,7.000000"), "{}", lines[2]);
        assert!(
            lines[3].ends_with(&format!(",no probe{}", ",".repeat(12))),
            "{}",
            lines[3]
        );
        let back = hostd_records::files::read(dir.path()).unwrap();
        let probe = |v: &[FileRecord]| v.iter().map(|r| r.probe.clone()).collect::<Vec<_>>();
        assert_eq!(probe(&back), probe(&files));
    }
}
