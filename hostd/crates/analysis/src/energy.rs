//! Energy figures, defined once in `hostd-records` (its `energy` module) so the probe's
//! records, the correlation, the analysis and the report share them.

pub use hostd_records::energy::*;
