//! Memory cgroups: v2 and v1 on captured trees, and v1 live where it is mounted.

use std::fs;
use std::path::Path;

use crate::model::process::CgroupVersion;
use crate::probe::cgroup::{
    procs_below, CgroupDir, CgroupReader, Hierarchies, Hierarchy, WALK_MAX_DEPTH,
};
use crate::Root;

use crate::tests::support::{skip, write};

const PLAIN_V2: &str = "25 1 253:0 / / rw - ext4 /dev/vda rw\n\
    31 25 0:27 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";

#[test]
fn v2_limit_comes_from_the_lowest_ancestor() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, "/proc/self/mountinfo", PLAIN_V2);
    write(r, "/proc/42/cgroup", "0::/kubepods/pod1/train\n");
    write(r, "/sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
    write(r, "/sys/fs/cgroup/kubepods/memory.max", "max\n");
    write(r, "/sys/fs/cgroup/kubepods/pod1/memory.max", "8589934592\n");
    write(
        r,
        "/sys/fs/cgroup/kubepods/pod1/memory.current",
        "6442450944\n",
    );
    let job = "/sys/fs/cgroup/kubepods/pod1/train";
    write(r, &format!("{job}/memory.max"), "max\n");
    write(r, &format!("{job}/memory.current"), "5368709120\n");
    write(r, &format!("{job}/memory.peak"), "7000000000\n");
    write(r, &format!("{job}/memory.high"), "max\n");
    write(r, &format!("{job}/memory.swap.max"), "0\n");
    write(
        r,
        &format!("{job}/memory.events"),
        "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n",
    );

    let cg = CgroupReader::discover(&Root::at(r))
        .for_pid(42)
        .unwrap()
        .unwrap();
    assert_eq!(cg.version, CgroupVersion::V2);
    assert_eq!(cg.path, "/kubepods/pod1/train");
    assert_eq!(cg.limit, Some(8 << 30));
    assert_eq!(cg.limit_set_by.as_deref(), Some("/kubepods/pod1"));
    // Headroom is measured where the limit applies: the pod uses 6 GiB of its 8.
    assert_eq!(cg.headroom, Some(2 << 30));
    assert_eq!(cg.usage, Some(5 << 30));
    assert_eq!(cg.peak, Some(7_000_000_000));
    assert_eq!(cg.oom_kills, Some(2));
    assert_eq!(cg.high, None);
    assert_eq!(cg.swap_limit, Some(0));
}

#[test]
fn v2_without_a_memory_controller_falls_back_to_v1() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        "/proc/self/mountinfo",
        "31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
         35 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
    );
    write(r, "/sys/fs/cgroup/unified/cgroup.controllers", "\n");
    write(r, "/proc/7/cgroup", "4:memory:/slurm/job_9\n0::/\n");
    let job = "/sys/fs/cgroup/memory/slurm/job_9";
    write(r, &format!("{job}/memory.limit_in_bytes"), "1073741824\n");
    write(r, &format!("{job}/memory.usage_in_bytes"), "805306368\n");
    write(
        r,
        &format!("{job}/memory.max_usage_in_bytes"),
        "1073741824\n",
    );
    write(
        r,
        &format!("{job}/memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
    );
    write(
        r,
        "/sys/fs/cgroup/memory/slurm/memory.limit_in_bytes",
        "9223372036854771712\n",
    );

    let cg = CgroupReader::discover(&Root::at(r))
        .for_pid(7)
        .unwrap()
        .unwrap();
    assert_eq!(cg.version, CgroupVersion::V1);
    assert_eq!(cg.limit, Some(1 << 30));
    assert_eq!(cg.headroom, Some(256 << 20));
    assert_eq!(cg.peak, Some(1 << 30));
    assert_eq!(cg.oom_kills, Some(1));
}

#[test]
fn a_container_cgroup_namespace_strips_the_mount_root() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        "/proc/self/mountinfo",
        "31 25 0:27 /kubepods/pod1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
    );
    write(r, "/sys/fs/cgroup/cgroup.controllers", "memory\n");
    write(r, "/sys/fs/cgroup/memory.max", "4294967296\n");
    write(r, "/sys/fs/cgroup/memory.current", "1073741824\n");
    write(r, "/proc/1/cgroup", "0::/kubepods/pod1\n");
    let cg = CgroupReader::discover(&Root::at(r))
        .for_pid(1)
        .unwrap()
        .unwrap();
    assert_eq!(cg.limit, Some(4 << 30));
    assert_eq!(cg.headroom, Some(3 << 30));
}

#[test]
fn no_memory_controller_is_none_and_an_invisible_cgroup_is_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        "/proc/self/mountinfo",
        "25 1 253:0 / / rw - ext4 /dev/vda rw\n",
    );
    write(r, "/proc/5/cgroup", "0::/\n");
    assert_eq!(
        CgroupReader::discover(&Root::at(r)).for_pid(5).unwrap(),
        None
    );

    write(r, "/proc/self/mountinfo", PLAIN_V2);
    write(r, "/sys/fs/cgroup/cgroup.controllers", "memory\n");
    write(r, "/proc/5/cgroup", "0::/elsewhere\n");
    let err = CgroupReader::discover(&Root::at(r)).for_pid(5).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::NotFound);
    let err = err.to_string();
    assert!(
        err.contains("/elsewhere") && err.contains("not visible"),
        "{err}"
    );
    assert!(
        CgroupReader::discover(&Root::at(r)).for_pid(6).is_err(),
        "a missing pid is an error"
    );
}

/// The one reader of a cgroup's counters, which the sampler polls every tick and
/// `run --limit` hands it: each version's own file names, and a missing file is
/// unknown, never 0.
#[test]
fn cgroup_dir_reads_each_version_from_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, "/v2/memory.current", "5368709120\n");
    write(r, "/v2/memory.peak", "7000000000\n");
    write(r, "/v2/memory.max", "max\n");
    write(r, "/v2/memory.high", "1073741824\n");
    write(r, "/v2/memory.events", "low 0\nmax 12\noom 3\noom_kill 2\n");
    // v1 files sit next to v2 names that must not be read for a v1 cgroup.
    write(r, "/v1/memory.usage_in_bytes", "805306368\n");
    write(r, "/v1/memory.max_usage_in_bytes", "1073741824\n");
    write(r, "/v1/memory.limit_in_bytes", "9223372036854771712\n");
    write(r, "/v1/memory.memsw.limit_in_bytes", "2147483648\n");
    write(
        r,
        "/v1/memory.oom_control",
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
    );
    write(r, "/v1/memory.current", "1\n");
    write(r, "/v1/memory.high", "1\n");

    let v2 = CgroupDir {
        version: CgroupVersion::V2,
        dir: r.join("v2"),
    };
    assert_eq!(v2.usage(), Some(5 << 30));
    assert_eq!(v2.peak(), Some(7_000_000_000));
    assert_eq!(v2.oom_kills(), Some(2));
    assert_eq!(v2.limit(), Some(None), "max is no limit");
    assert_eq!(v2.high(), Some(Some(1 << 30)));
    assert_eq!(v2.swap_limit(), None, "a missing file is unknown");

    let v1 = CgroupDir {
        version: CgroupVersion::V1,
        dir: r.join("v1"),
    };
    assert_eq!(v1.usage(), Some(768 << 20));
    assert_eq!(v1.peak(), Some(1 << 30));
    assert_eq!(v1.oom_kills(), Some(1));
    assert_eq!(
        v1.limit(),
        Some(None),
        "v1's page-aligned i64::MAX is no limit"
    );
    assert_eq!(v1.swap_limit(), Some(Some(2 << 30)));
    assert_eq!(v1.high(), None, "v1 has no memory.high");

    let gone = CgroupDir {
        version: CgroupVersion::V2,
        dir: r.join("removed"),
    };
    assert_eq!(
        (gone.usage(), gone.peak(), gone.oom_kills()),
        (None, None, None)
    );
}

/// `run --limit` makes its cgroup where the reader looks for one: v2 when it has
/// the memory controller, else v1's memory hierarchy.
#[test]
fn hierarchies_prefer_v2_with_memory_then_v1() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let hybrid = "31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                  35 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
    write(r, "/proc/self/mountinfo", hybrid);
    write(r, "/sys/fs/cgroup/unified/cgroup.controllers", "cpu pids\n");
    let h = Hierarchies::discover(&Root::at(r)).unwrap();
    let preferred = h.preferred().unwrap();
    assert_eq!(preferred.version, CgroupVersion::V1);
    assert_eq!(preferred.mount.mount_point, "/sys/fs/cgroup/memory");

    write(
        r,
        "/sys/fs/cgroup/unified/cgroup.controllers",
        "cpu memory pids\n",
    );
    let h = Hierarchies::discover(&Root::at(r)).unwrap();
    assert_eq!(h.preferred().unwrap().version, CgroupVersion::V2);
    assert!(h.v1_memory.is_some());

    write(
        r,
        "/proc/self/mountinfo",
        "25 1 253:0 / / rw - ext4 /dev/vda rw\n",
    );
    assert!(Hierarchies::discover(&Root::at(r))
        .unwrap()
        .preferred()
        .is_none());

    fs::remove_file(r.join("proc/self/mountinfo")).unwrap();
    assert!(
        Hierarchies::discover(&Root::at(r)).is_err(),
        "an unreadable mountinfo is an error, not \"no cgroups\""
    );
    assert!(!CgroupReader::discover(&Root::at(r)).available());
}

/// The real v1 memory controller: a process started inside a limited cgroup is seen
/// there with the limit, its usage and the headroom left.
#[test]
fn live_v1_cgroup_limit_usage_and_headroom() {
    let base = Path::new("/sys/fs/cgroup/memory");
    if !base.join("memory.limit_in_bytes").exists() {
        skip(format!(
            "no cgroup v1 memory controller at {}",
            base.display()
        ));
        return;
    }
    let parent = base.join(format!("memtriage-test-{}", std::process::id()));
    let child = parent.join("job");
    if fs::create_dir_all(&child).is_err() {
        skip("cannot create a memory cgroup (needs root)");
        return;
    }
    fs::write(parent.join("memory.limit_in_bytes"), "268435456").unwrap();
    let mut proc = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec python3 -c \"import sys; b=bytearray(48<<20); print('ok', flush=True); sys.stdin.read()\"",
            child.display()
        ))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(proc.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ok");

    let cg = CgroupReader::discover(&Root::host())
        .for_pid(proc.id() as i32)
        .unwrap()
        .expect("in a memory cgroup");
    drop(proc.stdin.take());
    proc.wait().unwrap();
    let _ = fs::remove_dir(&child);
    let _ = fs::remove_dir(&parent);

    assert_eq!(cg.version, CgroupVersion::V1);
    assert!(cg.path.ends_with("/job"), "{}", cg.path);
    assert_eq!(cg.limit, Some(256 << 20));
    assert!(cg
        .limit_set_by
        .as_deref()
        .unwrap()
        .ends_with(&format!("memtriage-test-{}", std::process::id())));
    let usage = cg.usage.unwrap();
    assert!((48 << 20..128 << 20).contains(&usage), "usage {usage}");
    let headroom = cg.headroom.unwrap();
    assert!(
        headroom <= (256 << 20) - (48 << 20) && headroom > 64 << 20,
        "headroom {headroom}"
    );
    assert_eq!(cg.oom_kills, Some(0));
}

/// A captured cgroup2 tree: `/a/b/c` and `/d`, each with its `cgroup.procs`.
fn walked_tree() -> (tempfile::TempDir, Root, Hierarchy) {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, "/proc/self/mountinfo", PLAIN_V2);
    write(r, "/sys/fs/cgroup/cgroup.controllers", "memory\n");
    write(r, "/sys/fs/cgroup/cgroup.procs", "1\n");
    write(r, "/sys/fs/cgroup/a/cgroup.procs", "10\n11\n");
    write(r, "/sys/fs/cgroup/a/b/cgroup.procs", "20\n");
    write(r, "/sys/fs/cgroup/a/b/c/cgroup.procs", "30\n");
    write(r, "/sys/fs/cgroup/d/cgroup.procs", "40\n");
    write(
        r,
        "/sys/fs/cgroup/a/memory.stat",
        "anon 4096\nfile 8192\nshmem 0\npgmajfault 3\n",
    );
    let root = Root::at(r);
    let h = Hierarchies::discover(&root).unwrap().v2.unwrap();
    (dir, root, h)
}

#[test]
fn the_walk_meets_each_cgroup_after_its_parent_down_to_its_depth() {
    let (_dir, root, h) = walked_tree();
    let top = root.path("/sys/fs/cgroup");
    let mut met = Vec::new();
    let complete = h.walk(&root, WALK_MAX_DEPTH, &mut |cg, depth| {
        let rel = cg.dir.strip_prefix(&top).unwrap().display().to_string();
        met.push((rel, depth));
    });
    assert!(complete);
    let at = |rel: &str| met.iter().position(|(r, _)| r == rel).unwrap();
    assert_eq!(met.len(), 5, "{met:?}");
    assert!(at("") < at("a") && at("a") < at("a/b") && at("a/b") < at("a/b/c"));
    assert!(met.contains(&("a/b/c".to_string(), 3)));
    assert!(met.contains(&("d".to_string(), 1)));

    let mut shallow = Vec::new();
    h.walk(&root, 1, &mut |cg, depth| {
        shallow.push((cg.dir.clone(), depth))
    });
    assert_eq!(shallow.len(), 3, "the top, a and d: {shallow:?}");
    assert!(shallow.iter().all(|(_, d)| *d <= 1));
}

#[test]
fn procs_below_lists_a_cgroup_and_every_one_under_it() {
    let (_dir, root, _h) = walked_tree();
    let mut pids = Vec::new();
    procs_below(&root.path("/sys/fs/cgroup/a"), &mut pids);
    pids.sort();
    assert_eq!(pids, vec![10, 11, 20, 30]);
}

#[test]
fn memory_stat_is_read_by_name_and_missing_once_the_cgroup_is_gone() {
    let (_dir, root, h) = walked_tree();
    let a = h.cgroup(&root, "/a").unwrap();
    assert_eq!(
        a.stat().unwrap(),
        vec![
            ("anon".to_string(), 4096),
            ("file".to_string(), 8192),
            ("shmem".to_string(), 0),
            ("pgmajfault".to_string(), 3),
        ]
    );
    assert_eq!(h.cgroup(&root, "/d").unwrap().stat(), None);
    assert_eq!(h.cgroup(&root, "/gone").unwrap().stat(), None);
}
