//! `/proc/PID/environ`: the environment a process was exec'd with, as NUL-separated
//! `KEY=VALUE` entries (later `setenv` calls do not show). Only the variables that
//! say which rank of a distributed job a process is are taken out.

use crate::model::process::RankInfo;

/// The rank torchrun (and `torch.distributed.launch`, DeepSpeed, Accelerate, which
/// set the same variables) gave the process; `None` without a numeric `RANK`.
/// Workers that inherit the environment carry the same values: telling them from the
/// rank is the caller's, by their parent.
pub fn rank(environ: &[u8]) -> Option<RankInfo> {
    let mut rank = None;
    let mut local_rank = None;
    let mut world_size = None;
    for entry in environ.split(|b| *b == 0) {
        let Some(eq) = entry.iter().position(|b| *b == b'=') else {
            continue;
        };
        let (key, value) = (&entry[..eq], &entry[eq + 1..]);
        let slot = match key {
            b"RANK" => &mut rank,
            b"LOCAL_RANK" => &mut local_rank,
            b"WORLD_SIZE" => &mut world_size,
            _ => continue,
        };
        *slot = number(value);
    }
    Some(RankInfo {
        rank: rank?,
        local_rank,
        world_size,
        worker: false,
    })
}

fn number(value: &[u8]) -> Option<u32> {
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::rank;
    use crate::model::process::RankInfo;

    #[test]
    fn torchrun_variables_name_the_rank() {
        let env = b"PATH=/usr/bin\0LOCAL_RANK=1\0RANK=3\0WORLD_SIZE=4\0MASTER_PORT=29500\0";
        assert_eq!(
            rank(env),
            Some(RankInfo {
                rank: 3,
                local_rank: Some(1),
                world_size: Some(4),
                worker: false,
            })
        );
    }

    #[test]
    fn without_a_numeric_rank_there_is_none() {
        assert_eq!(rank(b""), None);
        assert_eq!(rank(b"PATH=/bin\0HOME=/root\0"), None);
        assert_eq!(rank(b"LOCAL_RANK=0\0WORLD_SIZE=2\0"), None);
        assert_eq!(rank(b"RANK=\0"), None);
        assert_eq!(rank(b"RANK=abc\0LOCAL_RANK=0\0"), None);
        assert_eq!(rank(b"RANK=-1\0"), None);
    }

    #[test]
    fn only_whole_keys_count_and_odd_entries_are_passed_over() {
        // GROUP_RANK and ROLE_RANK are torchrun's too, but not the process's rank.
        let env = b"GROUP_RANK=7\0ROLE_RANK=5\0\xff\xfe\0noequals\0=\0RANK=2\0LOCAL_RANK=x\0";
        let r = rank(env).unwrap();
        assert_eq!(r.rank, 2);
        assert_eq!(r.local_rank, None, "unparsable is unknown");
        assert_eq!(r.world_size, None);
    }

    #[test]
    fn a_value_may_hold_an_equals_sign_and_the_last_entry_may_lack_its_nul() {
        let env = b"OPTS=a=b\0RANK=0";
        assert_eq!(rank(env).map(|r| r.rank), Some(0));
        assert_eq!(rank(b"RANK=1=2\0"), None);
    }
}
