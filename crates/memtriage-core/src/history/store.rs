//! The flight recorder's database: SQLite (WAL: crash-safe, readable while written,
//! queryable with `sqlite3`), its schema versioned in `meta`. A database that is
//! locked, damaged or from a newer schema is an error that names the file and says
//! what to do; it is never reset.
//!
//! Schema v4 (times are Unix milliseconds; bytes are bytes; NULL is unknown):
//!
//! ```sql
//! meta(key TEXT PRIMARY KEY, value TEXT)          -- schema_version, created_ms
//! machine(t, mem_available, swap_used, psi_some, psi_full, page_cache, shm_used, shm_size,
//!         thp, thp_anon)                          -- THP mode, THP-backed anonymous bytes
//! jobs(t, job, processes, rss, pss, swap, minor_faults, major_faults)
//! cgroups(t, cgroup, usage, limit_bytes, oom_kill, peak, oom, oom_group_kill,
//!         max_events, high_events)               -- memory.events counters
//! processes(t, pid, ppid, job, rss, pss, swap, forked_without_exec)  -- the largest 20
//! process_names(pid, comm, cmdline, cgroup, first_t)
//! oom_kills(t, pid, victim, cmdline, cgroup, limit_cgroup, constraint_kind,
//!           anon_rss, total_vm, killer, source, snapshot_json)
//! faults(t, pid, comm, signal, object, cmdline, cgroup)   -- segfaults, bus errors the kernel logged
//! kernel_crashes(t, pid, comm, text, cmdline, cgroup)      -- oopses, BUGs, panics, their lines
//! ```
//!
//! An older database (v1: no processes; v2: no THP, only `oom_kill` of a cgroup's
//! events; v3: no kernel crashes) is brought to v4 when a recorder opens it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::error::{Error, Result};
use crate::model::history::{Interval, MachineRow};

/// The schema this build writes and reads.
pub const SCHEMA_VERSION: i64 = 4;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machine (
    t INTEGER PRIMARY KEY,
    mem_available INTEGER, swap_used INTEGER, psi_some REAL, psi_full REAL,
    page_cache INTEGER, shm_used INTEGER
);
CREATE TABLE IF NOT EXISTS jobs (
    t INTEGER NOT NULL, job TEXT NOT NULL,
    processes INTEGER NOT NULL, rss INTEGER NOT NULL, pss INTEGER, swap INTEGER,
    minor_faults INTEGER NOT NULL, major_faults INTEGER NOT NULL,
    PRIMARY KEY (t, job)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cgroups (
    t INTEGER NOT NULL, cgroup TEXT NOT NULL,
    usage INTEGER, limit_bytes INTEGER, oom_kill INTEGER,
    PRIMARY KEY (t, cgroup)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS oom_kills (
    t INTEGER NOT NULL, pid INTEGER, victim TEXT, cgroup TEXT, anon_rss INTEGER,
    source TEXT NOT NULL, snapshot_json TEXT
);
CREATE INDEX IF NOT EXISTS oom_kills_t ON oom_kills (t);
";

/// From v1 to v2: the largest processes with their names, and more of each kill.
const MIGRATE_TO_2: &str = "
CREATE TABLE IF NOT EXISTS processes (
    t INTEGER NOT NULL, pid INTEGER NOT NULL, ppid INTEGER NOT NULL, job TEXT NOT NULL,
    rss INTEGER NOT NULL, pss INTEGER, swap INTEGER,
    PRIMARY KEY (t, pid)
) WITHOUT ROWID;
ALTER TABLE processes ADD COLUMN forked_without_exec INTEGER;
CREATE INDEX IF NOT EXISTS processes_pid ON processes (pid);
CREATE TABLE IF NOT EXISTS process_names (
    pid INTEGER NOT NULL, comm TEXT NOT NULL, cmdline TEXT NOT NULL, cgroup TEXT,
    first_t INTEGER NOT NULL,
    PRIMARY KEY (pid, comm, cmdline)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS faults (
    t INTEGER NOT NULL, pid INTEGER NOT NULL, comm TEXT NOT NULL, signal INTEGER NOT NULL,
    object TEXT, cmdline TEXT, cgroup TEXT
);
CREATE INDEX IF NOT EXISTS faults_t ON faults (t);
ALTER TABLE machine ADD COLUMN shm_size INTEGER;
ALTER TABLE oom_kills ADD COLUMN cmdline TEXT;
ALTER TABLE oom_kills ADD COLUMN limit_cgroup TEXT;
ALTER TABLE oom_kills ADD COLUMN constraint_kind TEXT;
ALTER TABLE oom_kills ADD COLUMN total_vm INTEGER;
ALTER TABLE oom_kills ADD COLUMN killer TEXT;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
";

/// From v2 to v3: the THP mode and THP-backed memory; a cgroup's peak and the rest
/// of its `memory.events` (v2's `max` counts the times usage hit the limit).
const MIGRATE_TO_3: &str = "
ALTER TABLE machine ADD COLUMN thp TEXT;
ALTER TABLE machine ADD COLUMN thp_anon INTEGER;
ALTER TABLE cgroups ADD COLUMN peak INTEGER;
ALTER TABLE cgroups ADD COLUMN oom INTEGER;
ALTER TABLE cgroups ADD COLUMN oom_group_kill INTEGER;
ALTER TABLE cgroups ADD COLUMN max_events INTEGER;
ALTER TABLE cgroups ADD COLUMN high_events INTEGER;
UPDATE meta SET value = '3' WHERE key = 'schema_version';
";

/// From v3 to v4: the kernel's crashes (an oops, BUG, GPF, panic) with their lines.
const MIGRATE_TO_4: &str = "
CREATE TABLE IF NOT EXISTS kernel_crashes (
    t INTEGER NOT NULL, pid INTEGER, comm TEXT, text TEXT NOT NULL, cmdline TEXT, cgroup TEXT
);
CREATE INDEX IF NOT EXISTS kernel_crashes_t ON kernel_crashes (t);
UPDATE meta SET value = '4' WHERE key = 'schema_version';
";

pub struct Store {
    pub(super) conn: Connection,
    path: PathBuf,
}

fn sqlite_error(path: &Path, e: rusqlite::Error) -> Error {
    let what = path.display().to_string();
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            Error::refused(
                what,
                "the database is locked by another writer",
                "stop the other recorder (one per database), or record into another file",
            )
        }
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
            Error::malformed(
                path,
                format!(
                    "not a memtriage history, or damaged ({e}); move it aside and start a new one \
                     (nothing was changed)"
                ),
            )
        }
        Some(rusqlite::ErrorCode::DiskFull) => Error::refused(
            what,
            "the disk is full",
            "free space; recording resumes, nothing already written is lost",
        ),
        _ => Error::malformed(path, format!("SQLite: {e}")),
    }
}

/// SQLite answers a directory or a device with "disk I/O error": say what it is.
fn refuse_non_files(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) => crate::probe::files::refuse_special(
            path,
            &meta,
            "the history is one SQLite file; name it (e.g. /var/lib/memtriage/history.db)",
        ),
        // Missing: SQLite makes it, or says why it cannot.
        Err(_) => Ok(()),
    }
}

impl Store {
    /// Opens (or creates) the database for recording.
    pub fn open(path: &Path) -> Result<Store> {
        refuse_non_files(path)?;
        let conn = Connection::open(path).map_err(|e| sqlite_error(path, e))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.setup(true)?;
        Ok(store)
    }

    /// Opens an existing database to read while a recorder may be writing it.
    pub fn open_read(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Err(Error::not_found(
                path.display().to_string(),
                "no such database (the recorder makes one: start `record`)",
            ));
        }
        refuse_non_files(path)?;
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| sqlite_error(path, e))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.setup(false)?;
        Ok(store)
    }

    pub(super) fn err(&self, e: rusqlite::Error) -> Error {
        sqlite_error(&self.path, e)
    }

    fn setup(&self, write: bool) -> Result<()> {
        self.conn
            .busy_timeout(Duration::from_secs(5))
            .map_err(|e| self.err(e))?;
        let has_meta: bool = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| self.err(e))?
            > 0;
        if has_meta {
            let version: Option<String> = self
                .conn
                .query_row(
                    "SELECT value FROM meta WHERE key = 'schema_version'",
                    [],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.err(e))?;
            let version: i64 = version.and_then(|v| v.parse().ok()).ok_or_else(|| {
                Error::malformed(
                    &self.path,
                    "its meta table has no schema_version: not a memtriage history",
                )
            })?;
            if version < SCHEMA_VERSION && write {
                self.migrate(version)?;
            } else if version < SCHEMA_VERSION {
                return Err(Error::malformed(
                    &self.path,
                    format!(
                        "written by an older memtriage (schema {version}; this one reads \
                         {SCHEMA_VERSION}): recording into it once (`record`) brings it up \
                         to date"
                    ),
                ));
            }
            if version > SCHEMA_VERSION {
                return Err(Error::malformed(
                    &self.path,
                    format!(
                        "written by a newer memtriage (schema {version}; this one reads up to \
                         {SCHEMA_VERSION}): use that version, or another database"
                    ),
                ));
            }
        } else if write {
            let tables: i64 = self
                .conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| self.err(e))?;
            if tables > 0 {
                return Err(Error::malformed(
                    &self.path,
                    "an SQLite database that is not a memtriage history; choose another file",
                ));
            }
            // A new database is made as v1 and migrated: one path to v2 for all.
            self.conn.execute_batch(SCHEMA).map_err(|e| self.err(e))?;
            self.conn
                .execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', '1')",
                    [],
                )
                .map_err(|e| self.err(e))?;
            self.migrate(1)?;
        } else {
            return Err(Error::malformed(
                &self.path,
                "not a memtriage history (no meta table)",
            ));
        }
        // Only a database known to be ours is changed. WAL: readers never block the
        // writer, and a crash loses at most the transaction in flight.
        if write {
            self.conn
                .pragma_update(None, "journal_mode", "WAL")
                .map_err(|e| self.err(e))?;
            self.conn
                .pragma_update(None, "synchronous", "NORMAL")
                .map_err(|e| self.err(e))?;
            // The WAL is truncated back to this after each checkpoint.
            self.conn
                .pragma_update(None, "journal_size_limit", 8i64 << 20)
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    fn migrate(&self, from: i64) -> Result<()> {
        let steps = [(2, MIGRATE_TO_2), (3, MIGRATE_TO_3), (4, MIGRATE_TO_4)];
        for (to, step) in steps {
            if from < to {
                let batch = format!("BEGIN; {step} COMMIT;");
                self.conn.execute_batch(&batch).map_err(|e| {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    self.err(e)
                })?;
            }
        }
        Ok(())
    }

    /// Notes in `meta` what this recorder can read, for `why` to say.
    pub fn note(&self, key: &str, value: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                params![key, value],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Writes one interval in one transaction: all of it or none of it.
    pub fn write(&mut self, interval: &Interval) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| sqlite_error(&path, e))?;
        let m = &interval.machine;
        let int = |v: Option<u64>| v.map(|v| v.min(i64::MAX as u64) as i64);
        tx.execute(
            "INSERT OR REPLACE INTO machine (t, mem_available, swap_used, psi_some, psi_full, \
             page_cache, shm_used, shm_size, thp, thp_anon) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                m.t_ms,
                int(m.mem_available),
                int(m.swap_used),
                m.psi_some,
                m.psi_full,
                int(m.page_cache),
                int(m.shm_used),
                int(m.shm_size),
                m.thp,
                int(m.thp_anon)
            ],
        )
        .map_err(|e| sqlite_error(&path, e))?;
        {
            let mut job = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO jobs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(|e| sqlite_error(&path, e))?;
            for j in &interval.jobs {
                job.execute(params![
                    m.t_ms,
                    j.job,
                    int(Some(j.processes)),
                    int(Some(j.rss)),
                    int(j.pss),
                    int(j.swap),
                    int(Some(j.minor_faults)),
                    int(Some(j.major_faults))
                ])
                .map_err(|e| sqlite_error(&path, e))?;
            }
            let mut cg = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO cgroups (t, cgroup, usage, limit_bytes, oom_kill, \
                     peak, oom, oom_group_kill, max_events, high_events) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(|e| sqlite_error(&path, e))?;
            for c in &interval.cgroups {
                cg.execute(params![
                    m.t_ms,
                    c.cgroup,
                    int(c.usage),
                    int(c.limit),
                    int(c.oom_kill),
                    int(c.peak),
                    int(c.oom),
                    int(c.oom_group_kill),
                    int(c.max_events),
                    int(c.high_events)
                ])
                .map_err(|e| sqlite_error(&path, e))?;
            }
            let mut process = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO processes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(|e| sqlite_error(&path, e))?;
            let mut name = tx
                .prepare_cached("INSERT OR IGNORE INTO process_names VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(|e| sqlite_error(&path, e))?;
            for p in &interval.processes {
                process
                    .execute(params![
                        m.t_ms,
                        p.pid,
                        p.ppid,
                        p.job,
                        int(Some(p.rss)),
                        int(p.pss),
                        int(p.swap),
                        p.forked_without_exec
                    ])
                    .map_err(|e| sqlite_error(&path, e))?;
                name.execute(params![p.pid, p.comm, p.cmdline, p.cgroup, m.t_ms])
                    .map_err(|e| sqlite_error(&path, e))?;
            }
            let mut kill = tx
                .prepare_cached(
                    "INSERT INTO oom_kills (t, pid, victim, cmdline, cgroup, limit_cgroup, \
                     constraint_kind, anon_rss, total_vm, killer, source, snapshot_json) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(|e| sqlite_error(&path, e))?;
            for k in &interval.kills {
                kill.execute(params![
                    k.t_ms,
                    k.pid,
                    k.victim,
                    k.cmdline,
                    k.cgroup,
                    k.limit_cgroup,
                    k.constraint.map(|c| c.as_str()),
                    int(k.anon_rss),
                    int(k.total_vm),
                    k.killer,
                    k.source.as_str(),
                    k.snapshot_json
                ])
                .map_err(|e| sqlite_error(&path, e))?;
            }
            let mut fault = tx
                .prepare_cached("INSERT INTO faults VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
                .map_err(|e| sqlite_error(&path, e))?;
            for f in &interval.faults {
                fault
                    .execute(params![
                        f.t_ms, f.pid, f.comm, f.signal, f.object, f.cmdline, f.cgroup
                    ])
                    .map_err(|e| sqlite_error(&path, e))?;
            }
            let mut crash = tx
                .prepare_cached("INSERT INTO kernel_crashes VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
                .map_err(|e| sqlite_error(&path, e))?;
            for c in &interval.crashes {
                crash
                    .execute(params![c.t_ms, c.pid, c.comm, c.text, c.cmdline, c.cgroup])
                    .map_err(|e| sqlite_error(&path, e))?;
            }
        }
        tx.commit().map_err(|e| sqlite_error(&path, e))
    }

    /// Drops what is older than `before_ms`, oldest first; then, while the database
    /// is larger than `max_bytes`, the oldest tenth of what is left. Returns the rows
    /// of `machine` dropped.
    pub fn retain(&mut self, before_ms: i64, max_bytes: Option<u64>) -> Result<u64> {
        let mut dropped = self.drop_before(before_ms)?;
        if let Some(max) = max_bytes {
            for _ in 0..20 {
                if self.size()? <= max {
                    break;
                }
                let (first, last): (Option<i64>, Option<i64>) = self
                    .conn
                    .query_row("SELECT min(t), max(t) FROM machine", [], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .map_err(|e| self.err(e))?;
                // The newest interval stays whatever the bound: a bound one interval
                // outgrows (thousands of processes on a busy machine) must not leave
                // an empty history.
                let (Some(first), Some(last)) = (first, last) else {
                    break;
                };
                if first == last {
                    break;
                }
                let cut = first + ((last - first) / 10).max(1);
                dropped += self.drop_before(cut)?;
                // VACUUM writes the whole database through the WAL: the checkpoint
                // after it gives that room back.
                self.conn.execute_batch("VACUUM").map_err(|e| self.err(e))?;
                self.conn
                    .pragma_update(None, "wal_checkpoint", "TRUNCATE")
                    .map_err(|e| self.err(e))?;
            }
        }
        Ok(dropped)
    }

    fn drop_before(&mut self, before_ms: i64) -> Result<u64> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| sqlite_error(&path, e))?;
        let mut n = 0;
        for table in [
            "machine",
            "jobs",
            "cgroups",
            "processes",
            "oom_kills",
            "faults",
            "kernel_crashes",
        ] {
            let rows = tx
                .execute(
                    &format!("DELETE FROM {table} WHERE t < ?1"),
                    params![before_ms],
                )
                .map_err(|e| sqlite_error(&path, e))?;
            if table == "machine" {
                n = rows as u64;
            }
        }
        // A name no interval left refers to goes with them.
        tx.execute(
            "DELETE FROM process_names WHERE first_t < ?1 AND NOT EXISTS \
             (SELECT 1 FROM processes p WHERE p.pid = process_names.pid)",
            params![before_ms],
        )
        .map_err(|e| sqlite_error(&path, e))?;
        tx.commit().map_err(|e| sqlite_error(&path, e))?;
        Ok(n)
    }

    /// Bytes the database takes (pages in use, the WAL aside).
    pub fn size(&self) -> Result<u64> {
        let pages: i64 = self
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let size: i64 = self
            .conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Ok((pages.max(0) as u64) * (size.max(0) as u64))
    }

    /// The machine rows between two times, oldest first.
    pub fn machine_between(&self, from_ms: i64, to_ms: i64) -> Result<Vec<MachineRow>> {
        let mut q = self
            .conn
            .prepare("SELECT t, mem_available, swap_used, psi_some, psi_full, page_cache, shm_used, shm_size, \
                 thp, thp_anon FROM machine WHERE t BETWEEN ?1 AND ?2 ORDER BY t")
            .map_err(|e| self.err(e))?;
        let uint = |v: Option<i64>| v.map(|v| v.max(0) as u64);
        let rows = q
            .query_map(params![from_ms, to_ms], |r| {
                Ok(MachineRow {
                    t_ms: r.get(0)?,
                    mem_available: uint(r.get(1)?),
                    swap_used: uint(r.get(2)?),
                    psi_some: r.get(3)?,
                    psi_full: r.get(4)?,
                    page_cache: uint(r.get(5)?),
                    shm_used: uint(r.get(6)?),
                    shm_size: uint(r.get(7)?),
                    thp: r.get(8)?,
                    thp_anon: uint(r.get(9)?),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// One job's RSS over time, oldest first.
    #[cfg(test)]
    pub fn job_rss(&self, job: &str) -> Result<Vec<(i64, u64)>> {
        let mut q = self
            .conn
            .prepare("SELECT t, rss FROM jobs WHERE job = ?1 ORDER BY t")
            .map_err(|e| self.err(e))?;
        let rows = q
            .query_map(params![job], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::history::{CgroupRow, JobRow, ProcessBrief};

    fn interval(t_ms: i64, rss: u64) -> Interval {
        Interval {
            machine: MachineRow {
                t_ms,
                mem_available: Some(1 << 30),
                ..MachineRow::default()
            },
            jobs: vec![JobRow {
                job: "python[42]".into(),
                processes: 3,
                rss,
                pss: None,
                swap: None,
                minor_faults: 10,
                major_faults: 0,
            }],
            cgroups: vec![CgroupRow {
                cgroup: "/job".into(),
                usage: Some(rss),
                limit: Some(1 << 30),
                oom_kill: Some(0),
                ..CgroupRow::default()
            }],
            processes: vec![ProcessBrief {
                forked_without_exec: None,
                pid: 42,
                ppid: 1,
                comm: "python".into(),
                cmdline: "python train.py".into(),
                cgroup: Some("/job".into()),
                job: "python[42]".into(),
                rss,
                pss: None,
                swap: None,
            }],
            kills: Vec::new(),
            faults: Vec::new(),
            crashes: Vec::new(),
        }
    }

    /// A database as an older memtriage left it: v1, then the given migrations.
    fn older_database(path: &Path, migrations: &[&str]) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')", [])
            .unwrap();
        for m in migrations {
            conn.execute_batch(m).unwrap();
        }
        conn
    }

    /// Issue 28, defect 15: `why --db /tmp` said "SQLite: disk I/O error".
    #[test]
    fn regression_a_directory_or_a_device_as_the_database_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        for (path, kind) in [
            (dir.path(), "a directory"),
            (Path::new("/dev/null"), "a device"),
        ] {
            let read = Store::open_read(path).err().unwrap().to_string();
            let write = Store::open(path).err().unwrap().to_string();
            for e in [read, write] {
                assert!(e.contains(kind) && e.contains("one SQLite file"), "{e}");
            }
        }
    }

    #[test]
    fn a_v1_record_is_brought_to_the_current_schema_by_a_recorder_and_a_reader_says_how() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        drop(older_database(&path, &[]));
        let e = Store::open_read(&path).err().unwrap().to_string();
        assert!(e.contains("older memtriage") && e.contains("v1.db"), "{e}");
        let mut store = Store::open(&path).unwrap();
        store.write(&interval(1000, 1 << 20)).unwrap();
        let reader = Store::open_read(&path).unwrap();
        let current = SCHEMA_VERSION.to_string();
        assert_eq!(reader.meta("schema_version").unwrap(), Some(current));
        let (t, largest) = reader.largest_at(5000).unwrap();
        assert_eq!(t, Some(1000));
        assert_eq!(largest[0].cmdline, "python train.py");
    }

    #[test]
    fn a_v2_record_keeps_its_rows_and_gains_thp_and_the_cgroup_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        older_database(&path, &[MIGRATE_TO_2])
            .execute("INSERT INTO cgroups VALUES (1000, '/job', 5, 10, 0)", [])
            .unwrap();
        let mut store = Store::open(&path).unwrap();
        let old = store.cgroup_at("/job", 1000).unwrap().unwrap();
        assert_eq!(
            (old.usage, old.oom_kill, old.max_events),
            (Some(5), Some(0), None)
        );
        let mut next = interval(2000, 1 << 20);
        next.machine.thp = Some("madvise".into());
        next.machine.thp_anon = Some(4 << 20);
        next.cgroups[0].max_events = Some(7);
        next.cgroups[0].oom = Some(1);
        next.cgroups[0].peak = Some(9 << 20);
        store.write(&next).unwrap();
        let reader = Store::open_read(&path).unwrap();
        let current = SCHEMA_VERSION.to_string();
        assert_eq!(reader.meta("schema_version").unwrap(), Some(current));
        let now = reader.cgroup_at("/job", 2000).unwrap().unwrap();
        assert_eq!(
            (now.max_events, now.oom, now.peak, now.oom_group_kill),
            (Some(7), Some(1), Some(9 << 20), None)
        );
        let machine = reader.machine_between(2000, 2000).unwrap();
        assert_eq!(machine[0].thp.as_deref(), Some("madvise"));
        assert_eq!(machine[0].thp_anon, Some(4 << 20));
    }

    /// A v3 record (no kernel crashes) keeps its faults and gains the crash table.
    #[test]
    fn a_v3_record_keeps_its_faults_and_gains_kernel_crashes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        older_database(&path, &[MIGRATE_TO_2, MIGRATE_TO_3])
            .execute(
                "INSERT INTO faults VALUES (1000, 9, 'python3', 11, NULL, NULL, NULL)",
                [],
            )
            .unwrap();
        let mut store = Store::open(&path).unwrap();
        let mut next = interval(2000, 1 << 20);
        next.crashes.push(crate::model::history::CrashRow {
            t_ms: 2500,
            pid: Some(9),
            comm: Some("python3".into()),
            text: "[ 1.000000] Oops: 0000 [#1] SMP\n".into(),
            cmdline: None,
            cgroup: None,
        });
        store.write(&next).unwrap();
        let reader = Store::open_read(&path).unwrap();
        assert_eq!(reader.faults(0, Some(9)).unwrap().len(), 1);
        let crashes = reader.crashes(0, Some(9)).unwrap();
        assert_eq!(crashes.len(), 1);
        assert!(crashes[0].text.contains("Oops"));
    }

    #[test]
    fn intervals_are_written_read_back_and_unknown_stays_null() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let mut store = Store::open(&path).unwrap();
        for i in 0..10 {
            store
                .write(&interval(i * 10_000, (100 + i as u64) << 20))
                .unwrap();
        }
        let reader = Store::open_read(&path).unwrap();
        let rows = reader.machine_between(0, 1_000_000).unwrap();
        assert_eq!(rows.len(), 10);
        assert_eq!(rows[0].swap_used, None, "unknown is NULL, not 0");
        let rss = reader.job_rss("python[42]").unwrap();
        assert_eq!(rss[9], (90_000, 109 << 20));
    }

    /// A store in `dir` with `n` intervals a second apart.
    fn store_of(dir: &tempfile::TempDir, n: i64) -> Store {
        let mut store = Store::open(&dir.path().join("h.db")).unwrap();
        for i in 0..n {
            store.write(&interval(i * 1000, 1 << 20)).unwrap();
        }
        store
    }

    #[test]
    fn retention_by_age_and_by_size_drops_the_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_of(&dir, 2000);
        assert_eq!(store.retain(500_000, None).unwrap(), 500);
        let left = store.machine_between(0, i64::MAX).unwrap();
        assert_eq!(left.first().map(|r| r.t_ms), Some(500_000));
        let before = store.size().unwrap();
        store.retain(0, Some(before / 2)).unwrap();
        assert!(store.size().unwrap() <= before / 2);
        let left = store.machine_between(0, i64::MAX).unwrap();
        assert_eq!(
            left.last().map(|r| r.t_ms),
            Some(1_999_000),
            "the newest are kept"
        );
    }

    #[test]
    fn a_bound_smaller_than_one_interval_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_of(&dir, 50);
        // The recorder trims again after each interval while over the bound.
        for _ in 0..5 {
            store.retain(0, Some(1)).unwrap();
        }
        let left = store.machine_between(0, i64::MAX).unwrap();
        assert_eq!(left.iter().map(|r| r.t_ms).collect::<Vec<_>>(), [49_000]);
    }

    #[test]
    fn a_newer_schema_a_foreign_database_and_garbage_are_errors_not_resets() {
        let dir = tempfile::tempdir().unwrap();
        let newer = dir.path().join("newer.db");
        drop(Store::open(&newer).unwrap());
        Connection::open(&newer)
            .unwrap()
            .execute(
                "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
        let e = Store::open(&newer).err().unwrap().to_string();
        assert!(e.contains("newer memtriage (schema 99"), "{e}");
        let untouched = std::fs::read(&newer).unwrap();
        assert!(Store::open(&newer).is_err());
        assert!(
            std::fs::read(&newer).unwrap() == untouched,
            "refused, and left as it was"
        );

        let foreign = dir.path().join("foreign.db");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        let e = Store::open(&foreign).err().unwrap().to_string();
        assert!(e.contains("not a memtriage history"), "{e}");

        let garbage = dir.path().join("garbage.db");
        std::fs::write(&garbage, vec![0x5a; 8192]).unwrap();
        let e = Store::open(&garbage).err().unwrap().to_string();
        assert!(
            e.contains("garbage.db") && e.contains("move it aside"),
            "{e}"
        );
        assert_eq!(
            std::fs::read(&garbage).unwrap(),
            vec![0x5a; 8192],
            "left as it was"
        );

        let e = Store::open_read(&dir.path().join("none.db"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("no such database (the recorder makes one"),
            "{e}"
        );
    }
}
