//! The files the line measurement writes, one per Python process (`PID.json`,
//! renamed into place whole, so a reader never sees half of one), read back.

use std::path::Path;

use crate::model::lines::ProcessLines;

/// What the processes have written so far.
#[derive(Debug, Default)]
pub struct LinesRead {
    /// By pid.
    pub processes: Vec<ProcessLines>,
    /// `PID.json: why`, for each file that could not be read.
    pub unreadable: Vec<String>,
}

/// Reads every process's file in `dir`; a file being replaced is read as it was or
/// as it is, never in part.
pub fn read(dir: &Path) -> LinesRead {
    let mut out = LinesRead::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            out.unreadable.push(format!("{}: {e}", dir.display()));
            return out;
        }
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let path = entry.path();
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        match std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<ProcessLines>(&b).map_err(|e| e.to_string()))
        {
            Ok(p) if p.pid == pid => out.processes.push(p),
            Ok(p) => out
                .unreadable
                .push(format!("{pid}.json: written for pid {}", p.pid)),
            Err(e) => out.unreadable.push(format!("{pid}.json: {e}")),
        }
    }
    out.processes.sort_by_key(|p| p.pid);
    out
}
