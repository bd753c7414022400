//! A series' 1 s throughput (`hostd_analysis::throughput`, the one computation of it) as
//! chart points, against the data written or against time, and drawn as a line (or, past
//! [`MAX_LINE_POINTS`] seconds, as its envelope, so that a run of hours keeps a small page).

use crate::envelope;
use crate::svg::Chart;
use crate::NS;
use hostd_analysis::throughput::Second;

/// Most seconds of one series drawn point by point (an hour).
pub(crate) const MAX_LINE_POINTS: usize = 3_600;

/// (GB written by the series at the second's end, GB/s over it).
pub(crate) fn by_data(secs: &[Second]) -> Vec<(f64, f64)> {
    secs.iter()
        .map(|s| (s.bytes as f64 / 1e9, s.rate_bps / 1e9))
        .collect()
}

/// (s from `t0` at the second's end, GB/s over it).
pub(crate) fn by_time(secs: &[Second], t0: i64) -> Vec<(f64, f64)> {
    secs.iter()
        .map(|s| ((s.end_ns - t0) as f64 / NS, s.rate_bps / 1e9))
        .collect()
}

/// Draws `pts` on `c` as a line, or past [`MAX_LINE_POINTS`] as the min–max band and mean of
/// [`envelope::FILE_BINS`] bins over `[x_lo, x_hi]`; true when drawn as an envelope.
pub(crate) fn draw(c: &mut Chart, pts: &[(f64, f64)], x_lo: f64, x_hi: f64, color: &str) -> bool {
    if pts.len() > MAX_LINE_POINTS {
        envelope::draw(c, pts, x_lo, x_hi, color);
        true
    } else {
        c.line(pts, color, "series seconds");
        false
    }
}

/// The note under a chart that drew some 1 s series as envelopes.
pub(crate) fn envelope_note() -> String {
    format!(
        r#"<p class="note envelope">A series of more than {MAX_LINE_POINTS} seconds is drawn as the min–max band and mean of {} bins of its 1 s rates (counters.csv has every sample).</p>"#,
        envelope::FILE_BINS
    )
}
