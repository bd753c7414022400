//! Aligned physical samples, the probe crate's output: the record type of `probe.csv`
//! (defined in `hostd-records`).

pub use hostd_records::probe::ProbeSample;
