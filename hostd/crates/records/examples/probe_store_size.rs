//! Bytes per sample of a run's probe samples (`probe/` or `probe.csv`) stored as Parquet
//! segments of 10 000 samples, per column:
//! `cargo run -p hostd-records --example probe_store_size -- RUN_DIR`.

use hostd_records::probe_store;
use parquet::file::reader::{FileReader, SerializedFileReader};

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("RUN_DIR"));
    let samples = if probe_store::exists(&dir) {
        probe_store::read(&dir)
    } else {
        hostd_records::probe::read(&dir)
    }
    .expect("probe samples");
    let mut total = 0usize;
    let mut per_col: Vec<(String, i64)> = Vec::new();
    for chunk in samples.chunks(10_000) {
        let bytes = probe_store::encode(chunk).unwrap();
        total += bytes.len();
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, &bytes).unwrap();
        let r = SerializedFileReader::new(f).unwrap();
        let rg = r.metadata().row_group(0);
        for (i, c) in rg.columns().iter().enumerate() {
            if per_col.len() <= i {
                per_col.push((c.column_path().string(), 0));
            }
            per_col[i].1 += c.compressed_size();
        }
    }
    let n = samples.len() as f64;
    println!(
        "{} samples: {:.3} B/sample",
        samples.len(),
        total as f64 / n
    );
    for (name, b) in per_col {
        println!("  {name:18} {:.3} B/sample", b as f64 / n);
    }
}
