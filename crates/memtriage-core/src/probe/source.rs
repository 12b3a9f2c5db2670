//! A line of a job's own source file, as a crash's Python frame names it: what the
//! line did (`os.kill(os.getpid(), signal.SIGBUS)`) tells a signal the job raised
//! itself from one the kernel sent.

use std::io::{BufRead, BufReader};
use std::path::Path;

/// Lines past this are not read: a frame's file is source, not data.
const MOST_LINES: u32 = 1_000_000;

/// Line `number` (1-based) of the file at `path`, trimmed; `None` when the file cannot
/// be read (gone, not ours) or is shorter.
pub fn line(path: &Path, number: u32) -> Option<String> {
    if number == 0 || number > MOST_LINES {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let mut reader = BufReader::new(file);
    let mut text = Vec::new();
    for _ in 0..number {
        text.clear();
        if reader.read_until(b'\n', &mut text).ok()? == 0 {
            return None;
        }
    }
    Some(String::from_utf8_lossy(&text).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_numbered_line_and_nothing_past_the_end() {
        let dir = std::env::temp_dir().join(format!("memtriage-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("job.py");
        std::fs::write(&file, "import os\n    os.kill(os.getpid(), 7)  \n").unwrap();
        assert_eq!(line(&file, 2).as_deref(), Some("os.kill(os.getpid(), 7)"));
        assert_eq!(line(&file, 3), None);
        assert_eq!(line(&file, 0), None);
        assert_eq!(line(&dir.join("gone.py"), 1), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
