//! The use cases as the front ends call them, on real processes, real files and the
//! captured system tree: what each report holds, and the kind of each refusal.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use memtriage_core::model::finding::Severity;
use memtriage_core::usecase::inspect::{InspectRequest, SortKey, Targets};
use memtriage_core::usecase::lock::LockOptions;
use memtriage_core::usecase::warm::{WarmOptions, WarmRequest};
use memtriage_core::usecase::{cache, doctor, evict, explain, inspect, lock, warm};
use memtriage_core::{Error, ErrorKind, Root};

use crate::support::{copy_tree, fixtures, Job};

const MIB: u64 = 1 << 20;

fn exited_pid() -> i32 {
    let mut c = Command::new("true").spawn().expect("spawn true");
    c.wait().expect("wait");
    c.id() as i32
}

fn named(pids: Vec<i32>, name: Option<&str>) -> InspectRequest {
    InspectRequest {
        targets: Targets::Named {
            pids,
            name: name.map(str::to_string),
        },
        tree: false,
        maps: false,
        sort: SortKey::Pid,
    }
}

#[test]
fn inspect_reads_the_pids_named_and_lists_those_it_could_not() {
    let s = Job::sleeper();
    let gone = exited_pid();
    let r = inspect::inspect(&Root::host(), &named(vec![s.pid(), gone], None)).unwrap();
    assert_eq!(r.schema, "memtriage.inspect/v1");
    assert_eq!(r.process_schema, "memtriage.process/v1");
    assert_eq!(r.processes.len(), 1);
    assert_eq!(r.processes[0].pid, s.pid());
    assert!(r.processes[0].rss().is_some_and(|rss| rss > 0));
    assert_eq!(r.errors.len(), 1);
    assert!(matches!(r.errors[0].error, Error::NoSuchProcess { pid } if pid == gone));
    assert!(
        r.failed(),
        "a named pid that could not be read fails the request"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["errors"][0]["error"],
        format!("pid {gone}: no such process (it may have exited)")
    );
    assert!(json.get("trees").is_none() && json.get("requested").is_none());
}

#[test]
fn inspect_by_name_tree_and_maps() {
    let s = Job::sleeper();
    let mut req = named(vec![s.pid()], None);
    req.maps = true;
    let r = inspect::inspect(&Root::host(), &req).unwrap();
    assert!(!r.failed());
    assert_eq!(r.maps_schema, Some("memtriage.maps/v1"));
    assert_eq!(r.maps[0].pid, s.pid());
    req.maps = false;
    req.tree = true;
    let t = inspect::inspect(&Root::host(), &req).unwrap();
    assert_eq!(t.tree_schema, Some("memtriage.tree/v1"));
    assert_eq!(t.trees[0].root, s.pid());
    assert!(t.processes.is_empty());
    let err = inspect::inspect(
        &Root::host(),
        &named(vec![], Some("no-such-process-name-7f3a")),
    )
    .unwrap_err();
    assert!(matches!(err, Error::NoMatchingProcess { .. }), "{err}");
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let by_name = inspect::inspect(&Root::host(), &named(vec![], Some("sleep 30"))).unwrap();
    assert!(by_name.processes.iter().any(|p| p.pid == s.pid()));
}

#[test]
fn inspect_refuses_requests_that_name_nothing_readable() {
    let none = inspect::inspect(&Root::host(), &named(vec![], None)).unwrap_err();
    assert_eq!(none.kind(), ErrorKind::BadInput);
    let zero = inspect::inspect(&Root::host(), &named(vec![0], None)).unwrap_err();
    assert_eq!(zero.kind(), ErrorKind::BadInput);
    assert!(zero.to_string().contains("positive"), "{zero}");
    for bad in [0, -3, 1 << 40] {
        assert_eq!(inspect::pid(bad).unwrap_err().kind(), ErrorKind::BadInput);
    }
    assert_eq!(inspect::pid(42).unwrap(), 42);
    let field = inspect::detail(Some(&["rss".to_string()])).unwrap_err();
    assert_eq!(field.kind(), ErrorKind::BadInput);
    assert!(field.to_string().contains("unknown field"), "{field}");
    let d = inspect::detail(Some(&["rollup".to_string()])).unwrap();
    assert!(d.rollup && !d.status && !d.oom && !d.cgroup);
}

#[test]
fn inspect_all_skips_what_vanishes_and_sorts() {
    let req = InspectRequest {
        targets: Targets::All,
        tree: false,
        maps: false,
        sort: SortKey::Rss,
    };
    let r = inspect::inspect(&Root::host(), &req).unwrap();
    assert!(!r.failed());
    let me = std::process::id() as i32;
    assert!(r.processes.iter().any(|p| p.pid == me));
    assert!(r.processes.iter().all(|p| !p.kernel_thread));
    let rss: Vec<Option<u64>> = r.processes.iter().map(|p| p.rss()).collect();
    assert!(
        rss.windows(2).all(|w| w[0] >= w[1]),
        "largest first: {rss:?}"
    );
}

#[test]
fn doctor_audits_the_captured_machine() {
    let root = Root::at(fixtures().join("system"));
    let r = doctor::doctor(&root, doctor::profile("inference").unwrap());
    assert_eq!(r.schema, "memtriage.doctor/v1");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["profile"], "inference");
    assert_eq!(json["system"]["schema"], "memtriage.system/v1");
    // The captured machine has problems, none of them an error.
    let problems = |r: &doctor::DoctorReport| -> Vec<(String, Severity)> {
        r.findings
            .iter()
            .filter(|f| f.severity != Severity::Ok)
            .map(|f| (f.id.clone(), f.severity))
            .collect()
    };
    let warn = |id: &str| (id.to_string(), Severity::Warn);
    let info = (String::from("thp.defrag-madvise"), Severity::Info);
    assert_eq!(
        problems(&r),
        [warn("max-map-count.low"), warn("memlock.low"), info.clone()]
    );
    assert!(!r.has_errors());
    // The same machine with a 64 MiB /dev/shm: one error, first.
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("system"), dir.path());
    let mountinfo = dir.path().join("proc/self/mountinfo");
    let text = std::fs::read_to_string(&mountinfo).unwrap();
    std::fs::write(&mountinfo, text.replace("size=24684092k", "size=65536k")).unwrap();
    let small_shm = doctor::doctor(&Root::at(dir.path()), doctor::profile("inference").unwrap());
    assert_eq!(
        problems(&small_shm),
        [
            (String::from("shm.too-small"), Severity::Error),
            warn("max-map-count.low"),
            warn("memlock.low"),
            info
        ]
    );
    assert!(small_shm.has_errors());
    let e = doctor::profile("gpu").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadInput);
    assert!(e.to_string().contains("unknown profile"), "{e}");
}

#[test]
fn explain_a_file_a_stream_and_text_alike() {
    let path = fixtures().join("logs/oom-dmesg.log");
    let bytes = std::fs::read(&path).unwrap();
    let shown = path.display().to_string();
    let from_file = explain::file(&path).unwrap();
    assert_eq!(from_file.schema, "memtriage.explain/v1");
    assert_eq!(from_file.source, shown);
    assert_eq!(from_file.bytes, bytes.len() as u64);
    assert!(from_file
        .findings
        .iter()
        .any(|f| f.severity == Severity::Error));
    let from_text = explain::text(&shown, &bytes);
    let from_stream = explain::read("-", &shown, "standard input", &bytes[..]).unwrap();
    assert_eq!(from_stream.source, "-");
    for other in [&from_text, &from_stream] {
        assert_eq!(other.lines, from_file.lines);
        assert_eq!(
            serde_json::to_value(&other.findings).unwrap(),
            serde_json::to_value(&from_file.findings).unwrap()
        );
    }
}

#[test]
fn explain_says_what_is_wrong_with_the_file() {
    let missing = explain::file(Path::new("/no/such/log")).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(missing.to_string(), "/no/such/log: no such file");
    let dir = explain::file(&fixtures()).unwrap_err();
    assert_eq!(dir.kind(), ErrorKind::BadInput);
    assert!(dir.to_string().contains("is a directory"), "{dir}");
}

fn scratch() -> tempfile::TempDir {
    // On the disk: tmpfs pages are not a cache that can be evicted.
    tempfile::tempdir_in("/var/tmp").unwrap()
}

fn write(dir: &Path, name: &str, mib: u64) -> PathBuf {
    let p = dir.join(name);
    let mut f = std::fs::File::create(&p).unwrap();
    let block: Vec<u8> = (0..MIB).map(|i| (i % 251) as u8).collect();
    for _ in 0..mib {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
    p
}

fn cached(p: &Path) -> u64 {
    cache::residency(&Root::host(), &[p.to_path_buf()], false)
        .unwrap()
        .files[0]
        .cached
}

fn warm_request(paths: &[PathBuf], lock: Option<LockOptions>) -> WarmRequest {
    WarmRequest {
        paths: paths.to_vec(),
        options: WarmOptions::default(),
        lock,
    }
}

#[test]
fn evict_warm_and_cache_take_a_file_from_cold_to_cached() {
    let d = scratch();
    let f = write(d.path(), "w.bin", 16);
    let ev = evict::evict(
        &Root::host(),
        std::slice::from_ref(&f),
        evict::Unwritten::Keep,
    )
    .unwrap();
    assert_eq!(ev.schema, "memtriage.evict/v1");
    assert_eq!(ev.files[0].size, 16 * MIB);
    assert!(ev.files[0].cached_after.unwrap() < 2 * MIB);
    assert_eq!(ev.files[0].unknown, None);
    assert!(ev.skipped.is_empty());
    assert!(ev.files[0].mapped_by.is_empty());
    let plan = warm::plan(&Root::host(), &warm_request(std::slice::from_ref(&f), None)).unwrap();
    assert_eq!(plan.bytes(), 16 * MIB);
    let mut report = plan.warm(&Root::host(), &|_| {}).unwrap();
    assert_eq!(report.schema, "memtriage.warm/v1");
    assert_eq!(
        report.files[0].stats.read + report.files[0].stats.already_cached,
        16 * MIB
    );
    assert_eq!(report.files[0].cached_after, Some(16 * MIB));
    assert_eq!(report.bytes_read, report.files[0].stats.read);
    assert!(plan.lock(&mut report).unwrap().is_none());
    assert_eq!(report.locked, None);
    let c = cache::residency(&Root::host(), std::slice::from_ref(&f), false).unwrap();
    assert_eq!(c.schema, "memtriage.cache/v1");
    assert_eq!(c.files[0].cached, 16 * MIB);
    assert_eq!(c.files[0].segments.len(), cache::SEGMENTS);
    assert_eq!(c.broken_headers().count(), 0);
}

#[test]
fn evict_names_the_processes_that_keep_pages_cached() {
    let d = scratch();
    let f = write(d.path(), "m.bin", 4);
    let file = std::fs::File::open(&f).unwrap();
    let len = 4 * MIB as usize;
    // SAFETY: a private read-only mapping of a file we created; unmapped below.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
        )
    };
    assert_ne!(ptr, libc::MAP_FAILED);
    // SAFETY: reading the mapping we own, one byte a page, to fault it in.
    let sum: u64 = (0..len)
        .step_by(4096)
        .map(|i| unsafe { *ptr.cast::<u8>().add(i) } as u64)
        .sum();
    assert!(sum > 0);
    let ev = evict::evict(
        &Root::host(),
        std::slice::from_ref(&f),
        evict::Unwritten::Keep,
    )
    .unwrap();
    // SAFETY: unmapping what we mapped above.
    unsafe { libc::munmap(ptr, len) };
    let e = &ev.files[0];
    assert!(
        e.cached_after.unwrap() >= 4 * MIB - 64 * 1024,
        "mapped pages stay: {e:?}"
    );
    let me = std::process::id() as i32;
    let mine = e
        .mapped_by
        .iter()
        .find(|m| m.pid == me)
        .expect("this process maps it");
    assert_eq!(mine.mapped, 4 * MIB);
    let again = evict::evict(&Root::host(), &[f], evict::Unwritten::Keep).unwrap();
    assert!(again.files[0].mapped_by.is_empty());
    assert!(again.files[0].cached_after.unwrap() < MIB);
}

#[test]
fn a_refused_lock_is_refused_before_anything_is_read() {
    let d = scratch();
    let f = write(d.path(), "big.bin", 8);
    evict::evict(
        &Root::host(),
        std::slice::from_ref(&f),
        evict::Unwritten::Keep,
    )
    .unwrap();
    let too_small = LockOptions {
        max: Some(MIB),
        hugepages: false,
    };
    let e = warm::plan(
        &Root::host(),
        &warm_request(std::slice::from_ref(&f), Some(too_small)),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Refused);
    let msg = e.to_string();
    assert!(msg.contains("exceed the maximum of 1.0 MiB"), "{msg}");
    assert!(
        !msg.contains("--"),
        "no CLI flag in an engine message: {msg}"
    );
    assert!(cached(&f) < 2 * MIB, "nothing was read");
    let e = lock::hold(&Root::host(), &[f], too_small).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Refused);
}

#[test]
fn warm_with_a_lock_holds_the_files_until_dropped() {
    let d = scratch();
    let f = write(d.path(), "l.bin", 4);
    let opts = Some(LockOptions {
        max: Some(64 * MIB),
        hugepages: false,
    });
    let plan = warm::plan(&Root::host(), &warm_request(&[f], opts)).unwrap();
    let mut report = plan.warm(&Root::host(), &|_| {}).unwrap();
    let held = plan
        .lock(&mut report)
        .unwrap()
        .expect("a lock was asked for");
    assert_eq!(report.locked, Some(4 * MIB));
    assert_eq!(held.bytes, 4 * MIB);
    assert!(vm_lck() >= 4 * MIB);
    drop(held);
    assert!(vm_lck() < 4 * MIB);
}

fn vm_lck() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmLck:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

#[test]
fn bad_warm_and_cache_requests_are_bad_input() {
    let d = scratch();
    let mut req = warm_request(&[d.path().to_path_buf()], None);
    req.options.threads = 0;
    let e = warm::plan(&Root::host(), &req).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadInput);
    assert!(e.to_string().contains("choose between 1 and 64"), "{e}");
    let dev = warm::plan(&Root::host(), &warm_request(&["/dev/zero".into()], None)).unwrap_err();
    assert_eq!(dev.kind(), ErrorKind::BadInput);
    assert!(
        dev.to_string().contains("a device, not a regular file"),
        "{dev}"
    );
    let missing = cache::residency(&Root::host(), &[d.path().join("gone")], false).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    let bad = d.path().join("bad.safetensors");
    let mut header = (1u64 << 63).to_le_bytes().to_vec();
    header.extend_from_slice(b"{}");
    std::fs::write(&bad, header).unwrap();
    let r = cache::residency(&Root::host(), &[bad], false).unwrap();
    let broken: Vec<&str> = r.broken_headers().collect();
    assert_eq!(broken.len(), 1);
    assert!(broken[0].contains("implausible"), "{broken:?}");
}

/// A `.safetensors` file of `tensors` tensors of 4 KiB each, its header tens of KiB.
fn write_safetensors(dir: &Path, tensors: usize) -> PathBuf {
    let entries: Vec<String> = (0..tensors)
        .map(|i| {
            format!(
                r#""layer.{i}.weight":{{"dtype":"F32","shape":[1024],"data_offsets":[{},{}]}}"#,
                i * 4096,
                (i + 1) * 4096
            )
        })
        .collect();
    let json = format!("{{{}}}", entries.join(","));
    let p = dir.join("model.safetensors");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(&(json.len() as u64).to_le_bytes()).unwrap();
    f.write_all(json.as_bytes()).unwrap();
    f.write_all(&vec![7u8; tensors * 4096]).unwrap();
    f.sync_all().unwrap();
    p
}

#[test]
fn a_cold_safetensors_file_and_its_tensors_agree_and_stay_cold() {
    let d = scratch();
    let f = write_safetensors(d.path(), 1500);
    evict::evict(
        &Root::host(),
        std::slice::from_ref(&f),
        evict::Unwritten::Keep,
    )
    .unwrap();
    assert_eq!(cached(&f), 0, "evicted");
    let r = cache::residency(&Root::host(), std::slice::from_ref(&f), false).unwrap();
    let file = &r.files[0];
    let tensors = file.tensors.as_ref().expect("tensors");
    assert_eq!(tensors.len(), 1500);
    let in_tensors: u64 = tensors.iter().map(|t| t.cached).sum();
    assert_eq!((file.cached, in_tensors), (0, 0), "{:?}", &tensors[..3]);
    // Reading the header left nothing behind for the next look either.
    assert_eq!(cached(&f), 0);
}

#[test]
fn a_warm_header_stays_warm() {
    let d = scratch();
    let f = write_safetensors(d.path(), 200);
    // Written just now: in the page cache, header and all.
    let before = cached(&f);
    assert!(before > 0);
    cache::residency(&Root::host(), std::slice::from_ref(&f), false).unwrap();
    assert_eq!(cached(&f), before);
}
