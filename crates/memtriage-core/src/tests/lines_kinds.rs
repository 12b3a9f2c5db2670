//! The kinds the diagnosis tells lines apart by, on the figures a hook writes.

use crate::diagnose::lines::classify;
use crate::model::lines::{
    CodeLocation, HeldAt, KindGrowth, LineGrowth, LineKind, ProcessLines, PythonStart,
};

const MIB: u64 = 1 << 20;

fn line(
    grown: u64,
    kept: u64,
    first: f64,
    last: f64,
    episodes: u64,
    series: &[(f64, i64)],
) -> LineGrowth {
    LineGrowth {
        user_code: true,
        at: CodeLocation {
            file: "/job/train.py".into(),
            line: 17,
            function: "__getitem__".into(),
            text: None,
        },
        path: Vec::new(),
        thread: None,
        kind: None,
        anon: KindGrowth { grown, kept },
        file: KindGrowth::default(),
        shmem: KindGrowth::default(),
        copied_after_fork: 0,
        minor_faults: 0,
        major_faults: 0,
        ticks: 20,
        episodes,
        grown_importing: 0,
        first_seconds: first,
        last_seconds: last,
        series: series.iter().map(|(t, b)| HeldAt(*t, *b)).collect(),
    }
}

fn process(lines: Vec<LineGrowth>, complete: bool, started: PythonStart) -> ProcessLines {
    ProcessLines {
        pid: 7,
        ppid: 1,
        started,
        role: None,
        python: "3.11.7".into(),
        interval_ms: 40,
        ticks: 250,
        first_seconds: Some(0.0),
        last_seconds: Some(10.0),
        hook_cpu_seconds: None,
        complete,
        fault_signals: 0,
        fault_period: Some(64),
        fault_signals_unavailable: None,
        pinned_host: None,
        lines_not_kept: 0,
        held_series: Vec::new(),
        failed: None,
        lines,
    }
}

fn kind(l: LineGrowth, complete: bool, started: PythonStart) -> Option<LineKind> {
    let mut ps = vec![process(vec![l], complete, started)];
    classify(&mut ps);
    ps[0].lines[0].kind
}

#[test]
fn a_line_that_keeps_rising_is_a_leak_and_a_working_set_taken_once_is_held() {
    let rising = [(1.0, 50), (5.0, 250), (9.9, 500)].map(|(t, m)| (t, m * MIB as i64));
    let leak = line(500 * MIB, 500 * MIB, 0.5, 9.9, 200, &rising);
    assert_eq!(kind(leak, true, PythonStart::Exec), Some(LineKind::Leak));

    let once = [(0.4, 600 * MIB as i64)];
    let held = line(600 * MIB, 600 * MIB, 0.2, 0.4, 1, &once);
    assert_eq!(kind(held, true, PythonStart::Exec), Some(LineKind::Held));

    // Read in slowly (a loaded machine), but in one call: still held.
    let slow = [(1.0, 200), (3.0, 400), (6.0, 600)].map(|(t, m)| (t, m * MIB as i64));
    let slow_once = line(600 * MIB, 600 * MIB, 0.2, 6.0, 1, &slow);
    assert_eq!(
        kind(slow_once, true, PythonStart::Exec),
        Some(LineKind::Held)
    );
}

#[test]
fn a_line_that_grew_mostly_while_importing_is_held_not_a_leak() {
    // The first `torch.optim.SGD(...)` on a GPU: six seconds of lazy imports, the
    // line on the stack the whole time (seen on an H200, gpu-real/h200).
    let rising = [(4.4, 10), (7.0, 60), (10.6, 102)].map(|(t, m)| (t, m * MIB as i64));
    let mut loading = line(102 * MIB, 102 * MIB, 4.4, 10.6, 60, &rising);
    loading.grown_importing = 90 * MIB;
    assert_eq!(
        kind(loading.clone(), true, PythonStart::Exec),
        Some(LineKind::Held)
    );
    // A loop's line that imported once on its first pass and leaks after.
    loading.grown_importing = 10 * MIB;
    assert_eq!(kind(loading, true, PythonStart::Exec), Some(LineKind::Leak));
}

#[test]
fn a_line_that_gives_back_what_it_takes_is_a_peak() {
    let flat = [(9.0, 2 * MIB as i64)];
    let peak = line(800 * MIB, 2 * MIB, 0.5, 9.9, 300, &flat);
    assert_eq!(kind(peak, true, PythonStart::Exec), Some(LineKind::Peak));
}

#[test]
fn growing_until_the_kill_is_a_leak_even_when_short() {
    let series = [(3.7, 128), (4.0, 268)].map(|(t, m)| (t, m * MIB as i64));
    let mut cache = line(268 * MIB, 268 * MIB, 3.7, 9.9, 8, &series);
    cache.last_seconds = 9.8;
    assert_eq!(
        kind(cache.clone(), false, PythonStart::Exec),
        Some(LineKind::Leak)
    );
    // The same figures in a process that ended well are not enough to tell.
    assert_ne!(kind(cache, true, PythonStart::Exec), Some(LineKind::Leak));
}

#[test]
fn copies_after_fork_are_copy_on_write_and_small_lines_get_no_kind() {
    let mut touch = line(MIB, MIB, 0.5, 9.0, 50, &[(9.0, MIB as i64)]);
    touch.copied_after_fork = 120 * MIB;
    assert_eq!(
        kind(touch, true, PythonStart::Fork),
        Some(LineKind::CopyOnWrite)
    );
    let small = line(MIB, MIB, 0.5, 9.0, 50, &[(9.0, MIB as i64)]);
    assert_eq!(kind(small, true, PythonStart::Exec), None);
    // A DataLoader worker iterating its parent's list of dicts (seen in the CLI test):
    // 62 MiB kept beside 48 MiB copied is the copy's, not memory held.
    let mut iterating = line(62 * MIB, 62 * MIB, 1.6, 1.9, 65, &[(1.9, 110 * MIB as i64)]);
    iterating.copied_after_fork = 48 * MIB;
    assert_eq!(
        kind(iterating, true, PythonStart::Fork),
        Some(LineKind::CopyOnWrite)
    );
}

#[test]
fn a_line_cannot_keep_more_than_its_process_grew() {
    // What the line reads as kept rises (pages freed and taken again at the same
    // addresses), but the process's own memory stays flat: no leak.
    let rising = [(1.0, 50), (5.0, 250), (9.9, 500)].map(|(t, m)| (t, m * MIB as i64));
    let stale = line(500 * MIB, 500 * MIB, 0.5, 9.9, 200, &rising);
    let mut flat = process(vec![stale.clone()], true, PythonStart::Exec);
    flat.held_series = [(0.5, 900), (5.0, 905), (9.9, 902)]
        .map(|(t, m)| HeldAt(t, m * MIB as i64))
        .to_vec();
    let mut ps = vec![flat];
    classify(&mut ps);
    assert_eq!(ps[0].lines[0].kind, Some(LineKind::Held));
    // The same line in a process that grew as much is a leak.
    let mut grew = process(vec![stale], true, PythonStart::Exec);
    grew.held_series = [(0.5, 400), (5.0, 650), (9.9, 900)]
        .map(|(t, m)| HeldAt(t, m * MIB as i64))
        .to_vec();
    let mut ps = vec![grew];
    classify(&mut ps);
    assert_eq!(ps[0].lines[0].kind, Some(LineKind::Leak));
}
