//! The fuzz targets' bodies, shared by the libFuzzer binaries (`fuzz/fuzz_targets/`,
//! nightly, `cargo fuzz run TARGET`, with this crate's feature `fuzzing`) and the test that replays every input kept
//! under `fuzz/corpus/` and `fuzz/artifacts/` on any toolchain. A target passes when
//! the code under it neither panics nor breaks the property it states.

use crate::diagnose::logs::LogScanner;
use crate::parse::{
    cgroup, cuda_snapshot, environ, kmsg, kv, limits, meminfo, mountinfo, oom_report, passwd,
    pickle, pressure, proc_connector, safetensors, slurm, smaps, smaps_rollup, stat, statm, status,
    swaps, text, thp, timeline, uptime, userspace_oom, windump, workload,
};

/// A target's body: any bytes in, a panic where the code under it fails.
pub type Target = fn(&[u8]);

/// Every target by name, in the order `fuzz/run.sh` runs them.
pub const TARGETS: &[(&str, Target)] = &[
    ("proc", proc_files),
    ("system", system_files),
    ("kmsg", kernel_log),
    ("safetensors", safetensors_header),
    ("proc_connector", proc_events),
    ("record", run_record),
    ("logs", log_scanner),
    ("pickle", cuda_snapshot_pickle),
    ("windump", windows_dump),
];

/// A process's files under /proc/PID, as read whole or cut short.
pub fn proc_files(bytes: &[u8]) {
    let lossy = String::from_utf8_lossy(bytes);
    let _ = stat::parse(bytes);
    let _ = statm::parse(bytes);
    let _ = status::parse(bytes);
    let _ = smaps_rollup::parse(bytes);
    let _ = smaps::parse(bytes);
    let _ = smaps::private_dirty_by_mapping(bytes);
    let _ = kv::sizes(bytes).count();
    let _ = text::escape_bytes(bytes);
    let _ = text::split_cmdline(bytes);
    let _ = environ::rank(bytes);
    let _ = cgroup::parse_membership(&lossy);
    let _ = limits::limit(&lossy, "Max locked memory");
}

/// The machine's files: /proc/meminfo, mountinfo, swaps, pressure, THP, uptime, passwd,
/// cgroup limits.
pub fn system_files(bytes: &[u8]) {
    let lossy = String::from_utf8_lossy(bytes);
    let _ = meminfo::parse(&lossy);
    let _ = mountinfo::parse(&lossy);
    let _ = mountinfo::unescape_octal(&lossy);
    let _ = mountinfo::tmpfs_size(&lossy);
    let _ = swaps::parse(&lossy);
    let _ = pressure::parse(&lossy);
    let _ = thp::selected(&lossy);
    let _ = uptime::parse(&lossy);
    let _ = passwd::parse(&lossy);
    let _ = kv::counters(&lossy).count();
    let _ = cgroup::parse_v1_limit(&lossy);
    let _ = cgroup::parse_v2_limit(&lossy);
}

/// Kernel log lines in every format, and the OOM kills read from them.
pub fn kernel_log(bytes: &[u8]) {
    let lossy = String::from_utf8_lossy(bytes);
    for line in lossy.lines() {
        let _ = kmsg::parse_line(line);
    }
    let _ = kmsg::oom_kills(lossy.lines());
    let _ = kmsg::xid_events(lossy.lines());
    let lines: Vec<&str> = lossy.lines().collect();
    let _ = oom_report::reports(&lines);
    // Slurm's words in a job's output and its cgroup paths.
    for line in &lines {
        let _ = slurm::stepd_oom(line);
        let _ = slurm::job_of_cgroup(line);
        let _ = slurm::mem_size(line);
    }
    let _ = slurm::scontrol_job(&lossy);
    // `serve`'s readers of the same streams: userspace killers' lines, and the
    // cgroup paths the kernel names in them.
    for line in lossy.lines() {
        let _ = userspace_oom::parse_line(line);
        let _ = workload::from_cgroup_path(line);
    }
}

/// A CUDA memory snapshot pickle, and its explanation: the reader runs nothing, and
/// whatever it accepts the analysis explains without a panic.
pub fn cuda_snapshot_pickle(bytes: &[u8]) {
    let _ = pickle::read(bytes);
    if let Ok(snap) = cuda_snapshot::parse(bytes) {
        let r = crate::diagnose::cuda_snapshot::analyse(&snap, None, "fuzz");
        for d in &r.devices {
            // The pools partition the device's segments.
            let sum = |f: fn(&_) -> u64| d.pools.iter().map(f).fold(0u64, u64::saturating_add);
            assert_eq!(sum(|p| p.reserved), d.reserved);
            assert_eq!(sum(|p| p.free), d.reserved_free);
            assert!(d.pools.iter().all(|p| p.largest_free_block <= p.free));
        }
    }
}

/// A safetensors header's JSON, whatever sizes the file and the length field claim.
pub fn safetensors_header(bytes: &[u8]) {
    let len = bytes.len() as u64;
    for (file_size, declared) in [(len + 8, len), (len, len), (0, len), (u64::MAX, u64::MAX)] {
        if let Ok(h) = safetensors::parse(file_size, declared, bytes) {
            // A header accepted names only ranges inside the file.
            for t in &h.tensors {
                assert!(
                    h.data_start <= t.start && t.start <= t.end && t.end <= file_size,
                    "{t:?} in {file_size}"
                );
            }
        }
    }
}

/// Datagrams from the kernel's process events connector.
pub fn proc_events(bytes: &[u8]) {
    let _ = proc_connector::parse_datagram(bytes);
}

/// A `memtriage run --record` file.
pub fn run_record(bytes: &[u8]) {
    let _ = timeline::parse(&String::from_utf8_lossy(bytes));
}

/// The log scanner: any bytes, and the same answer however the input is cut (the
/// first byte chooses where).
pub fn log_scanner(bytes: &[u8]) {
    let whole = scan(&[bytes]);
    let cut = bytes.first().map_or(0, |b| *b as usize).min(bytes.len());
    let split = scan(&[&bytes[..cut], &bytes[cut..]]);
    assert_eq!(whole, split, "cut at {cut}");
}

fn scan(chunks: &[&[u8]]) -> Vec<(String, u64)> {
    let mut s = LogScanner::with_source("fuzz");
    for c in chunks {
        s.feed(c);
    }
    s.finish();
    s.findings()
        .iter()
        .map(|f| (f.id.clone(), f.evidence.len() as u64))
        .collect()
}

/// A Windows kernel dump as the bytes of the whole file: the header, then each region
/// the parsers name (cut where the file ends), then the diagnosis of what was read.
pub fn windows_dump(bytes: &[u8]) {
    let region = |r: windump::FileRegion| {
        let start = usize::try_from(r.offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        &bytes[start..start.saturating_add(r.len).min(bytes.len())]
    };
    let Ok(header) = windump::header(bytes) else {
        return;
    };
    let mut drivers = Vec::new();
    let mut stack = Vec::new();
    if let Ok(layout) = windump::triage_layout(&header, region(header.triage_header_region())) {
        let list = region(layout.driver_list_region());
        let pool = region(layout.string_pool_region());
        drivers = windump::drivers(&layout, list, pool).unwrap_or_default();
        stack = windump::stack_addresses(&layout, region(layout.call_stack_region())).collect();
    }
    let contents = crate::diagnose::windump::DumpContents {
        header: &header,
        drivers: &drivers,
        stack: &stack,
        drivers_missing: None,
    };
    let finding = crate::diagnose::windump::explain(&contents, "fuzz.dmp");
    assert!(
        finding.title.starts_with("Windows bug check 0x"),
        "{}",
        finding.title
    );
}
