//! The PSS read budget: `smaps_rollup` walks the target's page tables under its mmap
//! lock (measured: 30 ms on a 1.6 GiB process, and at 10 Hz on a 4 GiB process it
//! stalled the target's mmap calls up to 456 ms), so readings are rationed to a share
//! of wall time.

use std::time::{Duration, Instant};

/// How much time `smaps_rollup` readings may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PssBudget {
    /// Share of wall time (since the sampler started) that readings may take.
    pub share: f64,
    /// Time allowed on top of the share, so the first readings of a short job happen.
    pub allowance: Duration,
    /// Least time between two readings, counted from the sampler's start for the
    /// first: a sampler at a fine interval then reads PSS far less often than RSS.
    pub min_spacing: Duration,
    /// Readings one tick may make while the budget allows: 1 for a job followed at a
    /// fine interval; more for a machine-wide view at a coarse one, whose hundreds of
    /// processes would otherwise wait hundreds of ticks for their turn.
    pub per_tick: u32,
    /// How long a process whose memory has not moved since its last reading (no
    /// page fault) keeps that reading: its PSS then drifts only as others come to
    /// share its pages or stop. Zero: read again at its turn like any other.
    pub unmoved_keeps: Duration,
}

impl PssBudget {
    /// About 1% of a core, as `memtriage run` has always read.
    pub const DEFAULT: PssBudget = PssBudget {
        share: 0.01,
        allowance: Duration::from_millis(150),
        min_spacing: Duration::ZERO,
        per_tick: 1,
        unmoved_keeps: Duration::ZERO,
    };

    /// For a machine-wide exporter or recorder, which must cost under 0.5% of a core
    /// in all (measured: 500 processes' `stat` every 10 s is about 0.1%), sampling
    /// every few seconds: at 0.2%, 500 small processes' PSS is refreshed about every
    /// half minute. A process that did not fault keeps its reading five minutes: on
    /// a node most sleep, and the budget goes to those that move (500 sleeping Python
    /// processes, 330 us a reading here, then cost 0.06% by arithmetic, where they
    /// held the whole 0.2%). The allowance is spent on the first tick, with no cap per
    /// tick: as many processes have their PSS in the first frame as it pays for.
    pub const MACHINE: PssBudget = PssBudget {
        share: 0.002,
        allowance: Duration::from_millis(50),
        min_spacing: Duration::ZERO,
        per_tick: u32::MAX,
        unmoved_keeps: Duration::from_secs(300),
    };

    /// For a person watching every process (`top`): as [`PssBudget::MACHINE`], at 1%
    /// of a core, as `run` reads. A view lasts as long as someone looks at it, and
    /// the rows on its screen want their PSS within seconds: at 0.2%, one first
    /// reading of a 1 GiB forked worker (93 ms) left every other process unread for
    /// 20 s. The first readings of 500 processes cost the same in all, only sooner.
    pub const VIEW: PssBudget = PssBudget {
        share: 0.01,
        ..PssBudget::MACHINE
    };

    /// For a process measuring itself at millisecond intervals (Python's `track()`):
    /// a block shorter than the spacing gets no reading from the sampler at all.
    pub const SELF: PssBudget = PssBudget {
        share: 0.01,
        allowance: Duration::from_millis(5),
        min_spacing: Duration::from_millis(200),
        per_tick: 1,
        unmoved_keeps: Duration::ZERO,
    };
}

impl Default for PssBudget {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What readings have cost so far against a [`PssBudget`]. A reading is begun only
/// while the time spent is within the budget, so the total exceeds the budget by at
/// most the cost of one reading.
#[derive(Debug, Clone)]
pub struct PssLedger {
    budget: PssBudget,
    started: Instant,
    last_reading: Instant,
    spent: Duration,
}

impl PssLedger {
    pub fn new(budget: PssBudget, started: Instant) -> Self {
        PssLedger {
            budget,
            started,
            last_reading: started,
            spent: Duration::ZERO,
        }
    }

    pub fn budget(&self) -> PssBudget {
        self.budget
    }

    /// Whether a reading may begin at `now`.
    pub fn allows(&self, now: Instant) -> bool {
        let wall = now.saturating_duration_since(self.started);
        now.saturating_duration_since(self.last_reading) >= self.budget.min_spacing
            && self.spent <= wall.mul_f64(self.budget.share) + self.budget.allowance
    }

    #[cfg(test)]
    pub(crate) fn spent(&self) -> Duration {
        self.spent
    }

    /// Books a reading that began at `began` and took `cost`.
    pub fn charge(&mut self, began: Instant, cost: Duration) {
        self.spent += cost;
        self.last_reading = began + cost;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_stop_once_the_share_and_allowance_are_spent() {
        let t0 = Instant::now();
        let budget = PssBudget {
            share: 0.01,
            allowance: Duration::from_millis(10),
            min_spacing: Duration::ZERO,
            per_tick: 1,
            unmoved_keeps: Duration::ZERO,
        };
        let mut ledger = PssLedger::new(budget, t0);
        assert!(
            ledger.allows(t0),
            "the allowance lets the first reading happen"
        );
        ledger.charge(t0, Duration::from_millis(11));
        assert!(!ledger.allows(t0 + Duration::from_millis(50)));
        // 1% of 1 s is 10 ms: 20 ms allowed in all by then, 11 spent.
        assert!(ledger.allows(t0 + Duration::from_secs(1)));
        ledger.charge(t0 + Duration::from_secs(1), Duration::from_millis(10));
        assert!(!ledger.allows(t0 + Duration::from_secs(1)));
        assert_eq!(ledger.spent, Duration::from_millis(21));
    }

    #[test]
    fn min_spacing_counts_from_the_start_and_from_each_reading() {
        let t0 = Instant::now();
        let mut ledger = PssLedger::new(PssBudget::SELF, t0);
        assert!(!ledger.allows(t0 + Duration::from_millis(199)));
        assert!(ledger.allows(t0 + Duration::from_millis(200)));
        let began = t0 + Duration::from_millis(200);
        ledger.charge(began, Duration::from_millis(1));
        assert!(!ledger.allows(began + Duration::from_millis(150)));
        assert!(ledger.allows(began + Duration::from_millis(201)));
    }
}
