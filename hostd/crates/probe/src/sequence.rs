//! Sequence-number accounting: every sample the probe took is either
//! received or counted as missing.

use serde::Serialize;

/// Sequence counters of one link.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SequenceStats {
    /// Samples received.
    pub received: u64,
    /// Discontinuities (a batch that did not start where the last one ended).
    pub gaps: u64,
    /// Samples missing in those discontinuities.
    pub missing: u64,
    /// Of the missing ones, how many the probe reported dropping (`dropped_before`).
    pub probe_reported_drops: u64,
    /// Batches whose first sequence number went backwards (probe restarted
    /// its numbering, e.g. after a reset); counted, not treated as a gap.
    pub restarts: u64,
    /// Batches that overlapped already received samples (duplicates skipped).
    pub duplicates: u64,
}

/// What happened at one batch boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuity {
    /// The batch continues the previous one (or is the first).
    Contiguous,
    /// `missing` samples are absent before this batch.
    Gap {
        /// Samples missing before the batch.
        missing: u64,
    },
    /// Sequence numbering restarted.
    Restart,
    /// The batch repeats `overlap` samples already received; skip them.
    Overlap {
        /// Leading samples of the batch to skip.
        overlap: u64,
    },
}

/// Tracks the next expected sequence number.
#[derive(Debug, Default, Clone)]
pub struct SequenceTracker {
    next: Option<u64>,
    stats: SequenceStats,
}

impl SequenceTracker {
    /// Accounts a batch of `count` samples starting at `first_seq`, of which
    /// the probe says `dropped_before` were dropped right before it.
    pub fn batch(&mut self, first_seq: u64, count: u64, dropped_before: u64) -> Continuity {
        self.stats.probe_reported_drops += dropped_before;
        let continuity = match self.next {
            None => Continuity::Contiguous,
            Some(next) if first_seq == next => Continuity::Contiguous,
            Some(next) if first_seq > next => {
                let missing = first_seq - next;
                self.stats.gaps += 1;
                self.stats.missing += missing;
                Continuity::Gap { missing }
            }
            Some(next) if first_seq + count > next && first_seq + count <= next + count => {
                self.stats.duplicates += 1;
                Continuity::Overlap {
                    overlap: next - first_seq,
                }
            }
            Some(_) => {
                self.stats.restarts += 1;
                Continuity::Restart
            }
        };
        let skipped = match continuity {
            Continuity::Overlap { overlap } => overlap,
            _ => 0,
        };
        self.stats.received += count.saturating_sub(skipped);
        self.next = Some(first_seq + count);
        continuity
    }

    /// Next sequence number expected, if any batch was seen.
    pub fn next_expected(&self) -> Option<u64> {
        self.next
    }

    /// Counters so far.
    pub fn stats(&self) -> SequenceStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_batches_have_no_gaps() {
        let mut t = SequenceTracker::default();
        assert_eq!(t.batch(100, 10, 0), Continuity::Contiguous);
        assert_eq!(t.batch(110, 10, 0), Continuity::Contiguous);
        assert_eq!(t.stats().received, 20);
        assert_eq!(t.stats().gaps, 0);
    }

    #[test]
    fn a_jump_is_a_gap_with_its_size_and_reported_drops() {
        let mut t = SequenceTracker::default();
        t.batch(0, 10, 0);
        assert_eq!(t.batch(25, 5, 15), Continuity::Gap { missing: 15 });
        let s = t.stats();
        assert_eq!((s.gaps, s.missing, s.probe_reported_drops), (1, 15, 15));
    }

    #[test]
    fn backwards_is_a_restart_and_overlap_is_skipped() {
        let mut t = SequenceTracker::default();
        t.batch(1000, 10, 0);
        assert_eq!(t.batch(1005, 10, 0), Continuity::Overlap { overlap: 5 });
        assert_eq!(t.stats().received, 15);
        assert_eq!(t.batch(0, 10, 0), Continuity::Restart);
        assert_eq!(t.stats().restarts, 1);
        assert_eq!(t.batch(10, 1, 0), Continuity::Contiguous);
    }
}
