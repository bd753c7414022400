//! Every setting of the detection in one place: the change-point rules' [`Settings`] and the
//! constants of the two views, the search, the onset, the join of the views, the
//! significance test and the stall finder. Each says its unit and why it has its value;
//! docs/methodology.md ("Change points", "Stalls") says how each is used.

// ---------------------------------------------------------------------------------------
// The change-point rules (`changepoint.rs`, `detect.rs`)

/// Settings of the change-point rules; the defaults are what `hostd analyze` uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Penalty per change point, in units of σ²·ln n (σ² the local noise variance, n the
    /// series' points): 3 is the leading term of MBIC, which also pays for choosing where
    /// the change lies. PELT only proposes candidates; the rules after it decide.
    pub penalty_log_n: f64,
    /// Fewest points (files or intervals) in a segment: 3, since a shorter one between its
    /// neighbours' levels is the file or interval that straddles a change, not a level.
    pub min_segment: usize,
    /// Neighbouring segments whose means differ by less than this fraction of the higher
    /// one merge; no event is smaller. 0.15: a drive that drifts 10–15 % over a run stays
    /// one segment.
    pub min_relative_change: f64,
    /// An event's change must also be this many times the wander of the series inside the
    /// segments on either side (see `detect::wander`; a ratio). 2: a change stands clear of
    /// the level's own drift on both sides, so a hub drive jittering ±27 % and small files'
    /// spread stay one segment.
    pub wander_factor: f64,
    /// Fewest files on each side of an event: 8, the fewest points the significance test
    /// splits on, so the first or last few files (a warm-up, the final flush) never make
    /// an event alone.
    pub min_side_files: usize,
    /// Fewest seconds (first start to last end) on each side of an event: 0.25 s, chosen
    /// while simulated drives recorded host time 20–25× faster; on a real drive the files
    /// and the bytes bind first.
    pub min_side_seconds: f64,
    /// Fewest bytes on each side of an event, as a fraction of the series' bytes (0.02) …
    pub min_side_bytes_fraction: f64,
    /// … but never more than this many bytes (256 MB): evidence is seconds and bytes, so a
    /// change with a few hundred MB on each side is found however long the run (800 → 200
    /// MB/s after 0.62 GB in a 60 GB run as in a 12 GB one).
    pub max_side_bytes: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            penalty_log_n: 3.0,
            min_segment: 3,
            min_relative_change: 0.15,
            wander_factor: 2.0,
            min_side_files: 8,
            min_side_seconds: 0.25,
            min_side_bytes_fraction: 0.02,
            max_side_bytes: 256e6,
        }
    }
}

/// Half-width of the window of the local noise estimate, first differences: 15 on each side
/// follow one regime's own noise (a contended stretch is noisier than the one after it)
/// while holding enough points for a MAD-based σ (its relative error at 15 is about 30 %).
pub const LOCAL_NOISE_HALF_WINDOW: usize = 15;

/// Window of the moving median behind the wander estimate, files: 7, the clipping's
/// window, whose median ignores up to three burst files in a row.
pub const WANDER_WINDOW: usize = 7;

/// Fewest files of a ramp: 3; fewer is a step, the odd file straddling it.
pub const MIN_RAMP_FILES: usize = 3;

/// Over time, an excursion shorter than this (s) between two opposite changes that comes
/// back to its level is a transient, not two changes of state: 1 s, as a burst file lifting
/// a few 100 ms intervals of a throttled drive made a recovery and a drop 0.7 s apart
/// (`fixtures/realdev/burst-in-throttled-stretch`).
pub const TRANSIENT_S: f64 = 1.0;

/// Δ(χ²) of the onset's profile-likelihood interval, and the least gain (in noise
/// variances) of a ramp over a step: 10.83 = χ²₁ at 99.9 %, so an interval misses the onset,
/// or a ramp is claimed where a step would do, about once in a thousand when the noise is
/// as estimated.
pub const INTERVAL_CHI2: f64 = 10.83;

/// Most (start, end) pairs a ramp's fit tries one by one. Past it (a change inside a long
/// run of files: 10 000 files either side are 10^8 pairs) the fit tries a grid of about as
/// many pairs, then every pair around the grid's best: proportionate time for a run of
/// 100 000 files, the same fit wherever the error is smooth in the ramp's ends.
pub const EXHAUSTIVE_RAMP_PAIRS: usize = 250_000;

// ---------------------------------------------------------------------------------------
// The two views of the throughput (`observation.rs`)

/// Rates further than this many robust σ from the median of their neighbours are clipped:
/// 4, far enough that Gaussian noise is clipped about 6 times in 100 000, near enough that
/// a file a buffer took at bus speed while the drive was throttled weighs no more than a
/// file 4 σ fast.
pub const CLIP_SIGMAS: f64 = 4.0;

/// Neighbours (with the span) of the moving median the clipping is measured from: 7, whose
/// median stands through three outliers in a row.
pub const CLIP_WINDOW: usize = 7;

/// Most intervals in the throughput-over-time view (per series): longer runs get coarser
/// intervals. 20 000: a 24-hour run gets 4.3 s intervals; 1 000 made a 300 s run's 0.3 s,
/// and a change 0.8 s into it had fewer than the five a side needs.
pub const MAX_INTERVALS: usize = 20_000;

/// Files smaller than this fraction of the series' median size are left out of the per-file
/// view: their rate is mostly per-file cost (open, fsync), and the onset search, counting
/// files, would lose reach over them (keeping the small files of a 2 MB–2 GB mix moved three
/// simulated onsets by 2.2–3.3 % of the bytes). 0.1. (The throughput over time needs no
/// such cut.)
pub const SMALL_FILE_FRACTION: f64 = 0.1;

/// An interval needs files of the series in flight for at least this share of it: 0.5;
/// less is mostly the pause between phases, whose low rate is no throughput of the series.
pub const MIN_COVER: f64 = 0.5;

/// An interval of a series that shares the link is searched only when another target's
/// files were in flight for at most this share of it: 0.1, as a target sharing the link,
/// searched whole, saw every start and end of the others' files (10–25 changes per run of
/// the hub scenario, none of them its events).
pub const MAX_SHARED: f64 = 0.1;

/// Fewest seconds on each side of a change in the throughput over time: 0.5 s, so that a
/// change with about a second on each side is found.
pub const MIN_SIDE_S: f64 = 0.5;

/// Fewest intervals on each side of a change in the throughput over time: 5, the 0.5 s at
/// 100 ms, and still points to shuffle where a long run's intervals are coarser.
pub const MIN_SIDE_INTERVALS: usize = 5;

// ---------------------------------------------------------------------------------------
// The onset and its interval (`onset.rs`)

/// Grid points per side of the byte-level ramp search: 80, an 81 × 81 grid of the ramp's
/// start and end over the spans around the index fit's (four before its start to two
/// after, three before its end to two after: seven and six spans), in steps of under a
/// tenth of a span; the interval is widened by one step each side.
pub const RAMP_GRID: usize = 80;

/// Spans before the first span of the new segment searched for the onset: 3, as many as
/// after it, for the span that straddles the change and a boundary the index fit put late.
pub const ONSET_SPAN_BEFORE: usize = 3;

/// Spans after the first span of the new segment searched for the onset: 3. The index fit
/// on clipped rates can put the boundary early (over time, a low lump of blk-throttle's
/// 100 ms budget looks like the new level), by more than one span on a device under load
/// (2.0–2.3 % of the bytes), so one span after it would leave the true onset outside the
/// search.
pub const ONSET_SPAN_AFTER: usize = 3;

/// Grid points per span when searching for the onset inside the candidate spans: 400, a
/// step of a quarter of a percent of a span, far below the intervals reported (which are
/// widened by one step each side).
pub const ONSET_GRID: usize = 400;

// ---------------------------------------------------------------------------------------
// One event from the two views (`views.rs`)

/// Two changes of the views are one when their onset intervals (a ramp's to where it
/// settles), each widened by this share of the series' bytes, overlap: 0.02, the fewest
/// bytes a side of one change needs (`Settings::min_side_bytes_fraction`), so two changes
/// of one view could not lie closer.
pub const SAME_CHANGE_FRACTION: f64 = 0.02;

/// Two neighbouring changes of the same kind, one found only over time and one only per
/// file, whose new levels differ by less than this share are one change that the views
/// placed apart: a second drop to the level the first already reached is no drop. 0.10,
/// below the 15 % a change must be (`Settings::min_relative_change`).
pub const SAME_LEVEL_FRACTION: f64 = 0.10;

// ---------------------------------------------------------------------------------------
// Significance (`significance.rs`, and the stall finder's test)

/// Permutations per test: 999, so p-values reach 1/1000, a tenth of [`ALPHA`] (1/500 with
/// the two statistics' Bonferroni doubling).
pub const PERMUTATIONS: u32 = 999;

/// Level of each test: 0.01, so a series without a change makes an event with probability
/// at most 1 % before the practical-size rule, which removes almost all of those.
pub const ALPHA: f64 = 0.01;

// ---------------------------------------------------------------------------------------
// Stalls (`stall.rs`)

/// A 100 ms interval below this fraction of the series' median 100 ms rate counts as
/// stalled: 0.1, a drive that moved (almost) nothing, not one that slowed (a drop is a
/// change of level, found by the views).
pub const STALL_FRACTION: f64 = 0.1;

/// A stall lasts at least this long, s: 0.5, five 100 ms intervals; shorter runs below the
/// threshold are the steady part the stall's significance is measured against.
pub const MIN_STALL_S: f64 = 0.5;

/// At least this many 100 ms intervals are needed to look for stalls: 20 (2 s), room for a
/// 0.5 s stall away from the first and last intervals (warm-up, final flush), which never
/// count, and for a steady part to measure it against.
pub const MIN_INTERVALS: usize = 20;

// ---------------------------------------------------------------------------------------
// The series and its first change (`lib.rs`)

/// A series shares the link when another target ran beside it for more than this share of
/// its time: 0.1, as [`MAX_SHARED`] for one interval.
pub const SHARED_FRACTION: f64 = 0.1;

/// A rise ends a warm-up when it is the series' first change, lies in its first
/// this-fraction of the bytes, and no cause (contention ending) explains it: 0.1, where a
/// drive waking from a low-power state comes up to speed.
pub const WARM_UP_FRACTION: f64 = 0.1;
