//! `/proc/PID/environ`, read for the rank a distributed launcher gave a process.
//! Only the process's user and root may read it.

use crate::model::process::RankInfo;
use crate::parse;
use crate::probe::root::Root;

/// The rank in the environment `pid` was exec'd with; `None` when it has none, and
/// also when the file is not ours to read or the process is gone (unknown, not an
/// error: a process without a rank is named without one).
pub fn rank(root: &Root, pid: i32) -> Option<RankInfo> {
    let bytes = root.read(&format!("/proc/{pid}/environ")).ok()?;
    parse::environ::rank(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_is_read_from_the_process_environment_and_missing_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let proc_dir = dir.path().join("proc/41");
        std::fs::create_dir_all(&proc_dir).unwrap();
        std::fs::write(
            proc_dir.join("environ"),
            b"RANK=1\0LOCAL_RANK=1\0WORLD_SIZE=2\0",
        )
        .unwrap();
        let root = Root::at(dir.path());
        assert_eq!(
            rank(&root, 41).map(|r| (r.rank, r.local_rank)),
            Some((1, Some(1)))
        );
        assert_eq!(rank(&root, 42), None);
    }

    #[test]
    fn this_process_has_no_rank_unless_its_launcher_gave_one() {
        let expected = std::env::var("RANK")
            .ok()
            .and_then(|r| r.parse::<u32>().ok());
        assert_eq!(
            rank(&Root::host(), std::process::id() as i32).map(|r| r.rank),
            expected
        );
    }
}
