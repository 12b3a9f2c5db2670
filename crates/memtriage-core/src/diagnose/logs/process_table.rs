//! Tables of processes with their memory, pasted one snapshot after another: `ps`,
//! `top`, `smem`, `kubectl top pod`, `docker stats`. A leak is shown so as often as by
//! a job's own prints ("two hours later" and the same `ps aux` again), so each row is
//! a reading of the memory of the process it names, and a process seen in several
//! snapshots is a series like any figure a job printed.
//!
//! The header says where the columns are. Rows are split at whitespace; a command
//! holds spaces, so columns after it (smem's `USS PSS RSS`) are counted from the end.

use crate::model::units::bytes_of;

/// Where one table's columns are, read from its header.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Columns {
    headers: usize,
    key: usize,
    key_is_pid: bool,
    memory: usize,
    /// The memory column comes after the command, whose words are not one token.
    memory_from_end: bool,
    /// The unit of a figure printed without one (ps and top: KiB).
    bare_unit: &'static str,
    /// `docker stats`: its header's words do not line up with its rows' tokens.
    docker: bool,
}

/// One row's reading: whose memory, and how much.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reading {
    pub series: String,
    pub bytes: u64,
}

const MEMORY_COLUMNS: &[&str] = &["RSS", "RES", "MEMORY(bytes)"];
const COMMAND_COLUMNS: &[&str] = &["COMMAND", "CMD", "Command", "COMM", "ARGS"];

impl Columns {
    /// The columns of a header line, or `None` when it is not the header of a table
    /// of processes with their memory.
    pub fn from_header(header: &str) -> Option<Columns> {
        let words: Vec<&str> = header.split_whitespace().collect();
        if header.contains("MEM USAGE / LIMIT") && words.contains(&"NAME") {
            return Some(Columns {
                headers: words.len(),
                key: 1,
                key_is_pid: false,
                memory: 3,
                memory_from_end: false,
                bare_unit: "B",
                docker: true,
            });
        }
        let position = |names: &[&str]| words.iter().position(|w| names.contains(w));
        let (key, key_is_pid) = match position(&["PID"]) {
            Some(p) => (p, true),
            None => (position(&["NAME"])?, false),
        };
        let memory = position(MEMORY_COLUMNS)?;
        let command = position(COMMAND_COLUMNS);
        if command.is_some_and(|c| key > c) {
            return None;
        }
        Some(Columns {
            headers: words.len(),
            key,
            key_is_pid,
            memory,
            memory_from_end: command.is_some_and(|c| memory > c),
            bare_unit: "KiB",
            docker: false,
        })
    }

    /// The reading of one row; `None` when the line is not a row of this table.
    pub fn reading(&self, row: &str) -> Option<Reading> {
        let tokens: Vec<&str> = row.split_whitespace().collect();
        let least = if self.docker { 6 } else { self.headers };
        if tokens.len() < least {
            return None;
        }
        let key = tokens[self.key];
        if self.key_is_pid && !key.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let figure = if self.memory_from_end {
            tokens[tokens.len() - (self.headers - self.memory)]
        } else {
            tokens[self.memory]
        };
        let bytes = size(figure, self.bare_unit)?;
        let series = if self.key_is_pid {
            format!("RSS of pid {key}")
        } else if self.docker {
            format!("memory of container {key}")
        } else {
            format!("memory of {key}")
        };
        Some(Reading { series, bytes })
    }
}

/// A figure as these tools print it: `417336` (in `bare_unit`), `1.2g`, `345Mi`,
/// `1.5GiB`.
fn size(figure: &str, bare_unit: &str) -> Option<u64> {
    let split = figure
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(figure.len());
    let (number, unit) = figure.split_at(split);
    let number: f64 = number.parse().ok()?;
    bytes_of(number, if unit.is_empty() { bare_unit } else { unit })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(header: &str, row: &str) -> Option<Reading> {
        Columns::from_header(header)?.reading(row)
    }

    #[test]
    fn ps_top_smem_kubectl_and_docker_rows_are_read_in_their_units() {
        let ps = "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND";
        let r = read(ps, "root        1166  6.2  0.5 68235476 5179612 ?    RNl  17:36   0:36 ray::RayWorkerVllm.execute_method").unwrap();
        assert_eq!(r.series, "RSS of pid 1166");
        assert_eq!(r.bytes, 5_179_612 * 1024);

        let top = "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND";
        let r = read(
            top,
            " 4211 app       20   0   12.1g   1.5g  20480 S  12.0  9.6   3:01.22 python train.py",
        )
        .unwrap();
        assert_eq!((r.series.as_str(), r.bytes), ("RSS of pid 4211", 3 << 29));

        let smem = "  PID User     Command                         Swap      USS      PSS      RSS";
        let r = read(
            smem,
            " 2290 www      /usr/bin/python3 -m app serve        0   812340   813000   820004",
        )
        .unwrap();
        assert_eq!(r.bytes, 820_004 * 1024);

        let kubectl = "NAME                        CPU(cores)   MEMORY(bytes)";
        let r = read(kubectl, "operator-7d9f8c-xk2lp       12m          345Mi").unwrap();
        assert_eq!(
            (r.series.as_str(), r.bytes),
            ("memory of operator-7d9f8c-xk2lp", 345 << 20)
        );

        let docker = "CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %     NET I/O           BLOCK I/O   PIDS";
        let r = read(docker, "3f2a9c1d2e4b   api       0.52%     1.5GiB / 7.7GiB       19.48%    1.2MB / 3.4MB     0B / 0B     12").unwrap();
        assert_eq!(
            (r.series.as_str(), r.bytes),
            ("memory of container api", 3 << 29)
        );
    }

    #[test]
    fn lines_that_are_no_rows_and_headers_without_memory_are_refused() {
        let ps = "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND";
        assert_eq!(read(ps, "two hours later"), None);
        assert_eq!(
            read(
                ps,
                "root  abc  0.4  0.0 28963612 417336 ?  SNl  17:36   0:02 x"
            ),
            None
        );
        assert_eq!(Columns::from_header("  PID TTY          TIME CMD"), None);
        assert!(
            Columns::from_header("COMMAND PID RSS").is_none(),
            "a key after the command"
        );
    }
}
