//! Every region of a process, from the full `/proc/PID/smaps`. Costly on a big
//! process (a page-table walk per region under its mmap lock): read only for `--maps`.

use crate::error::{Error, Result};
use crate::model::maps::MapsReport;
use crate::parse::smaps;
use crate::probe::procdir::{ProcDir, ReadError};
use crate::probe::root::Root;

pub fn read(root: &Root, pid: i32) -> Result<MapsReport> {
    let dir = ProcDir::open(root, pid)?;
    let bytes = dir.read_to_end("smaps").map_err(|e| match e {
        ReadError::Gone => Error::NoSuchProcess { pid },
        ReadError::Denied => Error::PermissionDenied {
            pid,
            what: format!("/proc/{pid}/smaps"),
        },
        ReadError::Other(source) => Error::io(format!("/proc/{pid}/smaps"), source),
    })?;
    let regions = smaps::parse(&bytes).map_err(|e| {
        Error::malformed(
            root.path(&format!("/proc/{pid}/smaps")),
            format!("line {}: {}", e.line, e.detail),
        )
    })?;
    Ok(MapsReport::from_regions(pid, regions))
}
