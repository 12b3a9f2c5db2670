//! Whom a killer that goes by `oom_score` (the kernel, earlyoom, nohang) would pick
//! now: a walk of every process that reads one file of each where it can.

use regex::Regex;

use crate::model::killers::{PredictedVictim, VictimRule};
use crate::parse::statm;
use crate::probe::procdir::ProcDir;
use crate::probe::process::{all_pids, read_i64};
use crate::probe::root::Root;

/// Whom `rule` picks among the machine's processes now, `job` naming the job's (the
/// killer's own pid and kernel threads are never picked). `None` for rules that do
/// not pick a process by score, or when no score could be read.
///
/// `job_growth`: bytes the job will have added by the time the killer acts; they
/// raise its largest process's score as the kernel's arithmetic would.
pub fn predict_victim(
    root: &Root,
    rule: &VictimRule,
    killer_pid: Option<i32>,
    job: &[i32],
    job_growth: u64,
    mem_total: u64,
) -> Option<PredictedVictim> {
    let pids = all_pids(root).ok()?;
    let sizes_unknown = pids.into_iter().map(|pid| (pid, None));
    predict_among(
        root,
        rule,
        killer_pid,
        job,
        job_growth,
        mem_total,
        sizes_unknown,
    )
}

/// [`predict_victim`] among the processes a caller lists, with their resident bytes
/// where it knows them (a sampler of every process): those are not read again.
pub fn predict_among(
    root: &Root,
    rule: &VictimRule,
    killer_pid: Option<i32>,
    job: &[i32],
    job_growth: u64,
    mem_total: u64,
    processes: impl IntoIterator<Item = (i32, Option<u64>)>,
) -> Option<PredictedVictim> {
    let VictimRule::HighestOomScore {
        prefer,
        avoid,
        by_rss,
    } = rule
    else {
        return None;
    };
    let compile = |p: &Option<String>| p.as_deref().and_then(|p| Regex::new(p).ok());
    let (prefer, avoid) = (compile(prefer), compile(avoid));
    let me = std::process::id() as i32;
    // One file per process where it can be: the score, the name only where a rule
    // goes by names, the size only for the few it decides between (a live view walks
    // every process this way every few seconds).
    let mut scored = Vec::new();
    for (pid, resident) in processes {
        if pid == 1 || Some(pid) == killer_pid || (pid == me && root.is_host()) {
            continue;
        }
        let Ok(dir) = ProcDir::open(root, pid) else {
            continue;
        };
        let Some(mut c) = Candidate::scored(&dir, pid, *by_rss, resident) else {
            continue;
        };
        if prefer.is_some() || avoid.is_some() {
            let comm = dir.comm().unwrap_or_default();
            if prefer.as_ref().is_some_and(|r| r.is_match(&comm)) {
                c.score += 300;
            }
            if avoid.as_ref().is_some_and(|r| r.is_match(&comm)) {
                c.score -= 300;
            }
            c.comm = Some(comm);
        }
        scored.push(c);
    }
    // The job's largest process carries its growth to the moment the killer acts.
    if mem_total > 0 {
        let largest = scored
            .iter_mut()
            .filter(|c| job.contains(&c.pid))
            .map(|c| (c.rss(root), c))
            .max_by_key(|(rss, _)| *rss);
        if let Some((Some(_), c)) = largest {
            c.score += match by_rss {
                true => job_growth as i64,
                false => (job_growth as f64 * 1000.0 / mem_total as f64) as i64,
            };
        }
    }
    let winner = highest(root, &mut scored)?;
    let comm = match winner.comm.take() {
        Some(comm) => comm,
        None => ProcDir::open(root, winner.pid).ok()?.comm()?,
    };
    Some(PredictedVictim {
        in_job: job.contains(&winner.pid),
        pid: winner.pid,
        comm,
    })
}

/// The candidate with the highest score that can be picked, a tie broken by resident
/// memory (as earlyoom does; the last of equals, as a scan in pid order keeps it).
fn highest<'a>(root: &Root, scored: &'a mut [Candidate]) -> Option<&'a mut Candidate> {
    scored.sort_by_key(|c| std::cmp::Reverse(c.score));
    let mut rest = scored;
    while !rest.is_empty() {
        let top = rest[0].score;
        let tied = rest.iter().take_while(|c| c.score == top).count();
        let (group, after) = rest.split_at_mut(tied);
        let pick = group
            .iter_mut()
            .filter_map(|c| Some((c.pickable_rss(root)?, c)))
            .max_by_key(|(rss, c)| (*rss, c.pid))
            .map(|(_, c)| c);
        if pick.is_some() {
            return pick;
        }
        rest = after;
    }
    None
}

/// A process a killer could pick, and its score by the killer's rule.
struct Candidate {
    pid: i32,
    score: i64,
    /// The kernel shows an `oom_score` of 0 for whom it never picks (a kernel thread,
    /// a zombie, one exempt) and for any small process of a large machine: such a
    /// candidate is looked at closer only where it could win.
    score_was_zero: bool,
    /// Resident bytes, read (`statm`) when needed and not known.
    rss: Option<u64>,
    comm: Option<String>,
}

impl Candidate {
    /// `None` for a process gone, or one no killer picks where that is cheap to tell.
    fn scored(dir: &ProcDir, pid: i32, by_rss: bool, resident: Option<u64>) -> Option<Self> {
        let (score, rss) = if by_rss {
            let rss = resident
                .or_else(|| statm_resident(dir))
                .filter(|rss| killable(dir, *rss))?;
            (rss as i64, Some(rss))
        } else {
            (read_i64(dir, "oom_score").ok()?, resident)
        };
        Some(Candidate {
            pid,
            score,
            score_was_zero: score == 0,
            rss,
            comm: None,
        })
    }

    fn rss(&mut self, root: &Root) -> Option<u64> {
        if self.rss.is_none() {
            self.rss = ProcDir::open(root, self.pid)
                .ok()
                .and_then(|dir| statm_resident(&dir));
        }
        self.rss
    }

    /// Its resident bytes, where a killer may pick it.
    fn pickable_rss(&mut self, root: &Root) -> Option<u64> {
        let rss = self.rss(root)?;
        if self.score_was_zero {
            let dir = ProcDir::open(root, self.pid).ok()?;
            if !killable(&dir, rss) {
                return None;
            }
        }
        Some(rss)
    }
}

/// Not a kernel thread or zombie (no resident memory), nor exempt from OOM kills.
fn killable(dir: &ProcDir, rss: u64) -> bool {
    rss > 0 && read_i64(dir, "oom_score_adj").ok() != Some(-1000)
}

fn statm_resident(dir: &ProcDir) -> Option<u64> {
    let pages = statm::parse(&dir.read("statm").ok()?)?.resident;
    Some(pages * rustix::param::page_size() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A process with its score, resident pages and `oom_score_adj`.
    fn process(base: &Path, pid: i32, comm: &str, score: i64, rss_pages: i64, adj: i64) {
        let d = base.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(d.join("oom_score"), format!("{score}\n")).unwrap();
        std::fs::write(d.join("oom_score_adj"), format!("{adj}\n")).unwrap();
        std::fs::write(
            d.join("statm"),
            format!("{} {rss_pages} 0 0 0 0 0\n", rss_pages * 2),
        )
        .unwrap();
    }

    /// A machine of processes: (pid, comm, oom_score, resident pages, oom_score_adj).
    fn machine(processes: &[(i32, &str, i64, i64, i64)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for &(pid, comm, score, rss_pages, adj) in processes {
            process(dir.path(), pid, comm, score, rss_pages, adj);
        }
        dir
    }

    fn kernel_rule() -> VictimRule {
        VictimRule::HighestOomScore {
            prefer: None,
            avoid: None,
            by_rss: false,
        }
    }

    fn pick(
        base: &Path,
        rule: &VictimRule,
        job: &[i32],
        growth: u64,
    ) -> Option<(i32, String, bool)> {
        let v = predict_victim(&Root::at(base), rule, None, job, growth, 1 << 30)?;
        Some((v.pid, v.comm, v.in_job))
    }

    #[test]
    fn the_highest_score_wins_and_a_tie_goes_to_the_larger() {
        let dir = machine(&[
            (1, "init", 900, 5000, 0),
            (100, "kworker/0:1", 0, 0, 0),
            (200, "bash", 0, 100, 0),
            (300, "python", 500, 1000, 0),
            (301, "python", 500, 1200, 0),
            (302, "python", 500, 900, 0),
            (400, "sshd", 20, 300, 0),
        ]);
        let base = dir.path();
        assert_eq!(
            pick(base, &kernel_rule(), &[], 0),
            Some((301, "python".into(), false))
        );
    }

    #[test]
    fn at_a_score_of_zero_only_a_process_the_kernel_could_pick_is_picked() {
        let dir = machine(&[
            (100, "kworker/0:1", 0, 0, 0),
            (200, "exempt", 0, 9000, -1000),
            (201, "small", 0, 40, 0),
            (202, "zombie", 0, 0, 0),
        ]);
        let base = dir.path();
        assert_eq!(
            pick(base, &kernel_rule(), &[], 0),
            Some((201, "small".into(), false))
        );
        std::fs::remove_dir_all(base.join("proc/201")).unwrap();
        assert_eq!(
            pick(base, &kernel_rule(), &[], 0),
            None,
            "no process can be picked"
        );
    }

    #[test]
    fn the_jobs_growth_and_a_preference_move_the_pick() {
        let dir = machine(&[
            (300, "java", 400, 3000, 0),
            (500, "python", 100, 800, 0),
            (501, "python", 50, 200, 0),
        ]);
        let base = dir.path();
        assert_eq!(
            pick(base, &kernel_rule(), &[500, 501], 0),
            Some((300, "java".into(), false))
        );
        // 512 MiB more of a 1 GiB machine: +500 to the job's largest process.
        let growth = 512 << 20;
        assert_eq!(
            pick(base, &kernel_rule(), &[500, 501], growth),
            Some((500, "python".into(), true))
        );
        let prefer = VictimRule::HighestOomScore {
            prefer: Some("^python$".into()),
            avoid: Some("^java$".into()),
            by_rss: false,
        };
        assert_eq!(
            pick(base, &prefer, &[], 0),
            Some((500, "python".into(), false))
        );
    }

    #[test]
    fn by_resident_memory_skips_the_exempt() {
        let dir = machine(&[
            (300, "exempt", 900, 9000, -1000),
            (301, "big", 1, 5000, 0),
            (302, "small", 800, 10, 0),
        ]);
        let base = dir.path();
        let by_rss = VictimRule::HighestOomScore {
            prefer: None,
            avoid: None,
            by_rss: true,
        };
        assert_eq!(
            pick(base, &by_rss, &[], 0),
            Some((301, "big".into(), false))
        );
    }
}
