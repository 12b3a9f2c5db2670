//! The OOM watch on captured trees: kills seen by one source or both, reports cut
//! between reads, crashes kept whole.

use super::*;
use crate::probe::cgroup::Hierarchies;
use std::io::Write;

/// A captured tree: a cgroup2 hierarchy with a memory controller, and a kernel log
/// that is a plain file the test appends to.
struct Tree {
    dir: tempfile::TempDir,
    root: Root,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        let t = Tree { dir, root };
        t.write(
            "proc/self/mountinfo",
            "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        );
        t.write("sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
        t.write("sys/fs/cgroup/memory.events", "oom 0\noom_kill 0\n");
        t.write("dev/kmsg", "6,1,1,-;booted\n");
        t
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn kills_in(&self, cgroup: &str, hierarchical: u64, local: u64) {
        let base = format!("sys/fs/cgroup{cgroup}");
        self.write(
            &format!("{base}/memory.events"),
            &format!("oom {hierarchical}\noom_kill {hierarchical}\n"),
        );
        self.write(
            &format!("{base}/memory.events.local"),
            &format!("oom {local}\noom_kill {local}\n"),
        );
    }

    fn log(&self, lines: &[&str]) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dir.path().join("dev/kmsg"))
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    }

    fn watcher(&self) -> (OomWatcher, Identities) {
        let h = Hierarchies::discover(&self.root)
            .unwrap()
            .preferred()
            .cloned();
        assert!(h.is_some(), "the captured hierarchy is found");
        let ids = Identities::new(&self.root, Duration::from_secs(60));
        (OomWatcher::new(&self.root, h, &[], true), ids)
    }
}

const CONSTRAINT: &str = "3,10,100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods.slice/pod,task_memcg=/kubepods.slice/pod/worker,task=python,pid=4242,uid=0";
const KILLED: &str = "3,11,101,-;Memory cgroup out of memory: Killed process 4242 (python) total-vm:9000kB, anon-rss:51200kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0";

fn kills(w: &OomWatcher) -> Vec<(String, String, &'static str, u64)> {
    w.counts()
        .kills
        .into_iter()
        .map(|(k, n)| (k.cgroup, k.victim, k.source, n))
        .collect()
}

/// A pod's cgroup with one container's below it, no kill yet, watched from `t0`.
fn pod_with_a_container() -> (Tree, OomWatcher, Identities, Instant) {
    let t = Tree::new();
    t.kills_in("/kubepods.slice", 0, 0);
    t.kills_in("/kubepods.slice/pod", 0, 0);
    t.kills_in("/kubepods.slice/pod/worker", 0, 0);
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    (t, w, ids, t0)
}

#[test]
fn a_kill_both_sources_see_counts_once_as_both() {
    let (t, mut w, ids, t0) = pod_with_a_container();
    // The report's two lines arrive in two reads; the counters rise all the way up.
    t.log(&[CONSTRAINT]);
    w.poll(&ids, t0 + Duration::from_secs(1), false);
    t.log(&[KILLED]);
    t.kills_in("/kubepods.slice", 1, 0);
    t.kills_in("/kubepods.slice/pod", 1, 0);
    t.kills_in("/kubepods.slice/pod/worker", 1, 1);
    w.poll(&ids, t0 + Duration::from_secs(2), true);
    w.poll(&ids, t0 + Duration::from_secs(20), true);
    assert_eq!(
        kills(&w),
        vec![(
            "/kubepods.slice/pod/worker".into(),
            "python".into(),
            "both",
            1
        )]
    );
    let c = w.counts();
    assert_eq!(c.last_anon_rss[0].1, 51200 * 1024);
    let key = &c.kills[0].0;
    assert_eq!(
        (key.constraint.as_str(), key.limit_cgroup.as_str()),
        ("cgroup", "/kubepods.slice/pod"),
        "the pod's limit was hit, not the container's"
    );
}

#[test]
fn one_source_alone_counts_after_the_wait_and_counters_without_local_files_are_each_cgroups_own() {
    let t = Tree::new();
    // No `.local` files (v1, v2 before 5.2): each counter is the cgroup's own, so
    // a parent's 2 and a child's 1 are three kills.
    t.write("sys/fs/cgroup/job/memory.events", "oom_kill 0\n");
    t.write("sys/fs/cgroup/job/step/memory.events", "oom_kill 0\n");
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    t.write("sys/fs/cgroup/job/memory.events", "oom_kill 2\n");
    t.write("sys/fs/cgroup/job/step/memory.events", "oom_kill 1\n");
    w.poll(&ids, t0 + Duration::from_secs(2), true);
    assert!(kills(&w).is_empty(), "waits for the kernel log");
    w.poll(&ids, t0 + Duration::from_secs(10), true);
    let mut got = kills(&w);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("/job".into(), String::new(), "memory_events", 2),
            ("/job/step".into(), String::new(), "memory_events", 1),
        ]
    );

    t.log(&[
        "[ 99.1] Out of memory: Killed process 77 (trainer) total-vm:1kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB",
    ]);
    w.poll(&ids, t0 + Duration::from_secs(11), false);
    w.poll(&ids, t0 + Duration::from_secs(30), false);
    assert!(kills(&w).contains(&(String::new(), "trainer".into(), "kernel_log", 1)));
}

#[test]
fn kills_before_the_watch_began_are_not_counted() {
    let t = Tree::new();
    t.log(&[CONSTRAINT, KILLED]);
    t.kills_in("/kubepods.slice/pod/worker", 1, 1);
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    w.poll(&ids, t0 + Duration::from_secs(30), true);
    assert!(kills(&w).is_empty(), "{:?}", kills(&w));
}

#[test]
fn a_container_removed_right_after_its_kill_is_matched_through_its_pod() {
    let (t, mut w, ids, t0) = pod_with_a_container();
    // The container's cgroup is gone before the next walk; its pod still counts.
    std::fs::remove_dir_all(t.dir.path().join("sys/fs/cgroup/kubepods.slice/pod/worker")).unwrap();
    t.kills_in("/kubepods.slice", 1, 0);
    t.kills_in("/kubepods.slice/pod", 1, 0);
    t.log(&[CONSTRAINT, KILLED]);
    w.poll(&ids, t0 + Duration::from_secs(2), true);
    w.poll(&ids, t0 + Duration::from_secs(20), true);
    assert_eq!(
        kills(&w),
        vec![(
            "/kubepods.slice/pod/worker".into(),
            "python".into(),
            "both",
            1
        )]
    );
}

#[test]
fn a_report_cut_between_reads_after_another_counts_each_kill_once() {
    let t = Tree::new();
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    t.log(&[CONSTRAINT]);
    w.poll(&ids, t0 + Duration::from_secs(1), false);
    t.log(&[
        KILLED,
        "3,12,102,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/x,task=java,pid=99,uid=0",
    ]);
    w.poll(&ids, t0 + Duration::from_secs(2), false);
    t.log(&["3,13,103,-;Out of memory: Killed process 99 (java) total-vm:1kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB"]);
    w.poll(&ids, t0 + Duration::from_secs(3), false);
    w.poll(&ids, t0 + Duration::from_secs(30), false);
    let mut got = kills(&w);
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "/kubepods.slice/pod/worker".into(),
                "python".into(),
                "kernel_log",
                1
            ),
            ("/x".into(), "java".into(), "kernel_log", 1),
        ]
    );
}

#[test]
fn a_report_split_before_its_verdict_keeps_its_task_table() {
    let t = Tree::new();
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    let before = SystemTime::now();
    t.log(&[
        "4,20,90,-;python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
        "6,21,91,-;[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
        "6,22,92,-;[   4242]     0  4242     2250    12800    65536        0             0 python",
        "6,23,93,-;[   4243]     0  4243      300       90    32768        0             0 sh",
        CONSTRAINT,
    ]);
    w.poll(&ids, t0 + Duration::from_secs(1), false);
    t.log(&[KILLED]);
    w.poll(&ids, t0 + Duration::from_secs(2), false);
    w.poll(&ids, t0 + Duration::from_secs(30), false);
    let recent = w.counts().recent;
    assert_eq!(recent.len(), 1, "{recent:?}");
    let k = &recent[0];
    assert_eq!(k.pid, Some(4242));
    assert_eq!(k.task_table.len(), 3, "{:?}", k.task_table);
    assert!(k.task_table[1].ends_with("python"));
    assert!(k.at >= before);
}

/// A kernel crash whose lines two reads cut in two is kept whole: the headline
/// from the first read, the faulting module and the process from the second.
#[test]
fn a_crash_cut_between_two_reads_is_kept_whole() {
    let t = Tree::new();
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    t.log(&[
        "1,30,100,-;BUG: unable to handle page fault for address: ffffb8a1c0e3f000",
        "1,31,101,-;#PF: supervisor read access in kernel mode",
        "4,32,102,-;Oops: 0000 [#1] PREEMPT SMP NOPTI",
    ]);
    w.poll(&ids, t0 + Duration::from_secs(1), false);
    assert!(w.counts().crashes.is_empty(), "the crash waits for its end");
    t.log(&[
        "4,33,103,-;CPU: 3 PID: 4242 Comm: python Tainted: P           OE     6.5.0-14-generic",
        "4,34,104,-;RIP: 0010:_nv012345rm+0x1c/0x30 [nvidia]",
        "4,35,105,-;---[ end trace 0000000000000000 ]---",
        "6,36,106,-;usb 1-1: new high-speed USB device",
    ]);
    w.poll(&ids, t0 + Duration::from_secs(2), false);
    let crashes = w.counts().crashes;
    assert_eq!(crashes.len(), 1, "{crashes:?}");
    let c = &crashes[0].crash;
    assert_eq!((c.pid, c.comm.as_deref()), (Some(4242), Some("python")));
    assert!(
        c.text.starts_with("[    0.000100] BUG: unable"),
        "{}",
        c.text
    );
    assert!(
        c.text.contains("[nvidia]") && c.text.contains("USB"),
        "{}",
        c.text
    );
}

/// A crash whose end never comes is kept after two more reads, as far as it got.
#[test]
fn a_crash_without_its_end_is_kept_after_two_reads() {
    let t = Tree::new();
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    t.log(&[
        "0,40,100,-;Kernel panic - not syncing: Fatal exception",
        "4,41,101,-;CPU: 0 PID: 1 Comm: init Not tainted 6.1.0",
    ]);
    for s in 1..=4 {
        w.poll(&ids, t0 + Duration::from_secs(s), false);
        if s < 3 {
            t.log(&["6,50,200,-;eth0: link up"]);
        }
    }
    let crashes = w.counts().crashes;
    assert_eq!(crashes.len(), 1, "{crashes:?}");
    assert_eq!(crashes[0].crash.pid, Some(1));
}

/// A WARN is the kernel's own check failing and the kernel going on: no death for
/// `why`, so nothing is kept.
#[test]
fn a_kernel_warning_is_not_kept_as_a_crash() {
    let t = Tree::new();
    let (mut w, ids) = t.watcher();
    let t0 = Instant::now();
    w.poll(&ids, t0, true);
    t.log(&[
        "4,60,100,-;WARNING: CPU: 3 PID: 295 at drivers/gpu/drm/i915/display/intel_bw.c:125 icl_get_bw_info+0x48e/0x540 [i915]",
        "4,61,101,-;---[ end trace 0000000000000000 ]---",
    ]);
    for s in 1..=4 {
        w.poll(&ids, t0 + Duration::from_secs(s), false);
    }
    assert!(w.counts().crashes.is_empty(), "{:?}", w.counts().crashes);
}
