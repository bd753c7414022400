//! The probe's per-file figures on the run's file records (`files-probe.csv`, appended by
//! `hostd_records::files_probe::Writer`): the rows of the files the correlation gave no
//! figures.

use hostd_records::files::FileProbe;
use hostd_records::files_probe::FigureRow;
use hostd_records::FileRecord;

use hostd_records::files::NO_PROBE;

/// The target the probe was inline with, and what the `probe` column says on its rows.
#[derive(Debug, Clone, Copy)]
pub struct ProbedTarget<'a> {
    /// Target label, as in `files.csv`.
    pub target: &'a str,
    /// The probe's id (or its source, e.g. `sim`, when it gave none).
    pub probe: &'a str,
}

/// Gives each record without probe figures its row's figures for `files-probe.csv`: a
/// record of the probed target says the probe and has empty figures (it was never
/// correlated), a record of any other target says [`NO_PROBE`]. Returns the rows of the
/// records given figures here, in their order.
pub fn fill_missing_figures(files: &mut [FileRecord], probed: ProbedTarget<'_>) -> Vec<FigureRow> {
    let mut filled = Vec::new();
    for r in files.iter_mut().filter(|r| r.probe.is_none()) {
        let probe = if r.target == probed.target {
            probed.probe
        } else {
            NO_PROBE
        };
        let figures = FileProbe {
            probe: probe.to_string(),
            ..FileProbe::default()
        };
        r.probe = Some(Box::new(figures.clone()));
        filled.push(FigureRow {
            target: r.target.clone(),
            phase: r.phase.clone(),
            index: r.index,
            figures,
        });
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;

    fn energy(e: f64) -> FileProbe {
        FileProbe {
            probe: "P7".into(),
            energy_j: Some(e),
            energy_share_j: Some(e),
            mean_power_w: Some(2.5),
            ..FileProbe::default()
        }
    }

    const PROBED: ProbedTarget<'static> = ProbedTarget {
        target: "t0",
        probe: "P7",
    };

    #[test]
    fn files_without_figures_get_the_probes_empty_row_or_no_probe() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = vec![
            FileRecord::new("t0", "write", 0, 0, 10, 100),
            FileRecord::new("t0", "write", 1, 10, 20, 200),
            FileRecord::new("t1", "write", 0, 0, 10, 300),
            FileRecord::new("t0", "write", 2, 20, 30, 400),
        ];
        // As `hostd run` writes them: files.csv streamed; the probed files' figures as
        // they settled (not in the files' order; #2 never correlated), read back, then the
        // rows of the rest.
        let mut w = hostd_records::files::Writer::create(dir.path()).unwrap();
        files.iter().for_each(|f| w.write(f).unwrap());
        drop(w);
        let mut figures = hostd_records::files_probe::stream(dir.path());
        let row = |index, figures| FigureRow {
            target: "t0".into(),
            phase: "write".into(),
            index,
            figures,
        };
        figures.append(&[row(1, energy(7.0)), row(0, energy(3.0))]);
        hostd_records::files_probe::read_streamed(dir.path(), &mut files).unwrap();
        let filled = fill_missing_figures(&mut files, PROBED);
        let keys: Vec<_> = filled
            .iter()
            .map(|r| (r.target.as_str(), r.index))
            .collect();
        assert_eq!(keys, [("t1", 0), ("t0", 2)]);
        // Each row says what its record now has.
        assert_eq!(filled[1].figures, **files[3].probe.as_ref().unwrap());
        assert!(fill_missing_figures(&mut files, PROBED).is_empty());
        figures.append(&filled);
        let text = std::fs::read_to_string(dir.path().join("files-probe.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "target,phase,index,{}",
                hostd_records::files::PROBE_COLUMNS.join(",")
            )
        );
        assert!(
            lines[1].starts_with("t0,write,1,P7,7.000000,7.000000,,2.500000,"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].starts_with("t0,write,0,P7,3.000000"),
            "{}",
            lines[2]
        );
        let empty = ",".repeat(12);
        assert_eq!(lines[3], format!("t1,write,0,no probe{empty}"));
        assert_eq!(lines[4], format!("t0,write,2,P7{empty}"));
        let back = hostd_records::files::read(dir.path()).unwrap();
        let probe = |v: &[FileRecord]| v.iter().map(|r| r.probe.clone()).collect::<Vec<_>>();
        assert_eq!(probe(&back), probe(&files));
        assert_eq!(back[1].probe.as_ref().unwrap().energy_j, Some(7.0));
    }
}
