//! The memory cgroup a sampler watches: the job's own, or the one `--limit` made.

use std::path::PathBuf;

use crate::model::process::CgroupVersion;
use crate::parse::kv;

/// A cgroup whose usage is watched: the job's own, or the one `--limit` made.
#[derive(Debug, Clone)]
pub struct CgroupWatch {
    pub version: CgroupVersion,
    pub dir: PathBuf,
}

impl CgroupWatch {
    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    pub fn usage(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V2 => "memory.current",
            CgroupVersion::V1 => "memory.usage_in_bytes",
        };
        self.read(file)?.trim().parse().ok()
    }

    pub fn peak(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V2 => "memory.peak",
            CgroupVersion::V1 => "memory.max_usage_in_bytes",
        };
        self.read(file)?.trim().parse().ok()
    }

    pub fn oom_kills(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V2 => "memory.events",
            CgroupVersion::V1 => "memory.oom_control",
        };
        kv::counter(&self.read(file)?, "oom_kill")
    }
}
