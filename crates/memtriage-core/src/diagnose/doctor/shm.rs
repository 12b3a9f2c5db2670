//! /dev/shm: mounted, tmpfs, big enough for DataLoader batches, not full.

use crate::model::finding::{Evidence, Finding, Severity};
use crate::model::ids;
use crate::model::system::{SystemSnapshot, SHM_NOT_MOUNTED};
use crate::model::units::iec;

use super::{ev, finding, percent, unreadable, Profile, GIB};

/// Below this /dev/shm breaks DataLoader workers for any real batch ("Bus error").
pub const SHM_MIN: u64 = GIB;
/// What a training box should give /dev/shm at most ask for: a quarter of RAM, 1 to 16 GiB.
pub fn shm_recommended(mem_total: Option<u64>) -> u64 {
    let quarter = mem_total.map_or(16 * GIB, |t| t / 4 / GIB * GIB);
    quarter.clamp(GIB, 16 * GIB)
}

use crate::model::system::MEMINFO;
use crate::model::system::MOUNTINFO;

fn shm_fix(size: u64) -> String {
    let g = (size / GIB).max(1);
    format!(
        "mount -o remount,size={g}G /dev/shm\n\
         echo 'tmpfs /dev/shm tmpfs defaults,size={g}G 0 0' >> /etc/fstab   # keeps it after reboot\n\
         Docker: docker run --shm-size={g}g … (or --ipc=host)\n\
         Kubernetes: mount an emptyDir with medium: Memory and sizeLimit: {g}Gi at /dev/shm"
    )
}

pub(super) fn shm(sys: &SystemSnapshot, profile: Profile) -> Vec<Finding> {
    let why = "PyTorch DataLoader workers hand batches to the main process through /dev/shm, and \
               NCCL uses it between GPUs of one node; when it fills, workers die with \"Bus error\" \
               (Docker's default is 64 MiB).";
    let total = sys.memory.as_ref().and_then(|m| m.total);
    let Some(shm) = &sys.shm else {
        if sys.unreadable_reason("shm") == Some(SHM_NOT_MOUNTED) {
            let want = shm_recommended(total);
            return vec![finding(
                ids::SHM_NOT_MOUNTED,
                Severity::Warn,
                "no tmpfs is mounted at /dev/shm".into(),
                vec![ev("/dev/shm", "not a mount point", MOUNTINFO)],
                why,
                format!(
                    "mount -t tmpfs -o size={}G tmpfs /dev/shm\n{}",
                    want / GIB,
                    shm_fix(want)
                ),
            )];
        }
        return vec![unreadable(
            sys,
            ids::SHM_UNREADABLE,
            "/dev/shm",
            &[("shm", MOUNTINFO)],
        )];
    };
    let mut evidence = vec![
        ev("filesystem", shm.fs_type.clone(), MOUNTINFO),
        Evidence::bytes_or_unreadable("size= option", shm.size_option, MOUNTINFO),
    ];
    if let Some(t) = shm.total {
        evidence.push(Evidence::bytes("size", t, "statvfs /dev/shm"));
    }
    if let Some(u) = shm.used {
        evidence.push(Evidence::bytes("used", u, "statvfs /dev/shm"));
    }
    if let Some(t) = total {
        evidence.push(Evidence::bytes("MemTotal", t, MEMINFO));
    }
    let mut out = Vec::new();
    if shm.fs_type != "tmpfs" {
        out.push(finding(
            ids::SHM_NOT_TMPFS,
            Severity::Warn,
            format!("/dev/shm is {}, not tmpfs", shm.fs_type),
            evidence.clone(),
            why,
            shm_fix(shm_recommended(total)),
        ));
    }
    let Some(size) = shm.size() else {
        out.push(finding(
            ids::SHM_OK,
            Severity::Info,
            "/dev/shm is mounted; its size could not be read".into(),
            evidence,
            why,
            String::new(),
        ));
        return out;
    };
    let want = shm_recommended(total);
    if size < SHM_MIN {
        out.push(finding(
            ids::SHM_TOO_SMALL,
            Severity::Error,
            format!(
                "/dev/shm is only {}: DataLoader workers will die with \"Bus error\"",
                iec(size)
            ),
            evidence.clone(),
            why,
            shm_fix(want),
        ));
    } else if profile == Profile::Training && size < want {
        out.push(finding(
            ids::SHM_TOO_SMALL,
            Severity::Warn,
            format!(
                "/dev/shm is {}; a training box should give it {}",
                iec(size),
                iec(want)
            ),
            evidence.clone(),
            why,
            shm_fix(want),
        ));
    }
    if let Some(used) = shm.used {
        let pct = percent(used, size);
        if pct >= 80.0 {
            out.push(finding(
                ids::SHM_MOSTLY_FULL,
                Severity::Warn,
                format!("/dev/shm is {pct:.0}% full ({} of {})", iec(used), iec(size)),
                evidence.clone(),
                "Segments left behind by killed workers (torch_*, psm_*, nccl-*) hold RAM until \
                 deleted, and the next DataLoader worker dies with \"Bus error\" when it cannot allocate.",
                "ls -lt /dev/shm   # then remove segments no running process uses, e.g.\n\
                 find /dev/shm -maxdepth 1 -name 'torch_*' -mmin +60 -delete"
                    .into(),
            ));
        }
    }
    if let Some(t) = total.filter(|t| size > *t) {
        out.push(finding(
            ids::SHM_LARGER_THAN_RAM,
            Severity::Info,
            format!(
                "/dev/shm may grow to {}, more than the {} of RAM",
                iec(size),
                iec(t)
            ),
            evidence.clone(),
            "tmpfs pages live in RAM (or swap); filling /dev/shm past RAM OOM-kills processes \
             instead of failing the write.",
            shm_fix(t / 2),
        ));
    }
    if out.is_empty() {
        let used = shm
            .used
            .map_or(String::new(), |u| format!(", {} used", iec(u)));
        out.push(finding(
            ids::SHM_OK,
            Severity::Ok,
            format!("/dev/shm is {}{used}", iec(size)),
            evidence,
            why,
            String::new(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_recommendation_is_a_quarter_of_ram_within_bounds() {
        assert_eq!(shm_recommended(Some(24 * GIB)), 6 * GIB);
        assert_eq!(shm_recommended(Some(2 * GIB)), GIB);
        assert_eq!(shm_recommended(Some(1024 * GIB)), 16 * GIB);
        assert_eq!(shm_recommended(None), 16 * GIB);
    }
}
