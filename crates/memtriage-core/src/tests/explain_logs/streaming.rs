//! The streaming contract: any chunking gives the same matches and findings (random logs
//! too, with proptest, whose seeds are in proptest-regressions/explain_logs/streaming.txt),
//! CRLF and progress bars, odd bytes, long lines cut at a bounded cost, matches bounded but
//! counted, and their JSON form.

use crate::diagnose::logs::{FailureClass, LogScanner, MAX_LINE};

use super::{all_fixtures, evidence, only_finding, scan, scan_fixture};

/// Feeds `bytes` in chunks whose sizes come from a small deterministic generator.
fn scan_chunked(bytes: &[u8], seed: u64, max: usize) -> LogScanner {
    let mut s = LogScanner::with_source("test.log");
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut pos = 0;
    while pos < bytes.len() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = 1 + (state >> 33) as usize % max;
        let end = (pos + n).min(bytes.len());
        s.feed(&bytes[pos..end]);
        pos = end;
    }
    s.finish();
    s
}

#[test]
fn any_chunking_gives_the_same_matches_and_findings() {
    for (name, bytes) in all_fixtures() {
        let whole = scan(&bytes);
        for (seed, max) in [(1, 1), (2, 3), (3, 17), (4, 64), (5, 4096), (6, 1 << 20)] {
            let chunked = scan_chunked(&bytes, seed, max);
            assert_eq!(chunked.matches(), whole.matches(), "{name} seed {seed}");
            assert_eq!(chunked.findings(), whole.findings(), "{name} seed {seed}");
            assert_eq!(chunked.lines(), whole.lines(), "{name}");
            assert_eq!(chunked.bytes(), bytes.len() as u64);
        }
        // One line at a time, as `run` hands over a child's output.
        let mut by_line = LogScanner::with_source("test.log");
        let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        for line in text.split(|b| *b == b'\n') {
            by_line.feed_line(line);
        }
        by_line.finish();
        assert_eq!(by_line.matches(), whole.matches(), "{name} by line");
    }
}

#[test]
fn crlf_logs_read_like_lf_logs() {
    for (name, bytes) in all_fixtures() {
        let crlf: Vec<u8> = bytes
            .iter()
            .flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })
            .collect();
        let a = scan(&bytes);
        let b = scan(&crlf);
        assert_eq!(a.matches(), b.matches(), "{name}");
        assert_eq!(a.lines(), b.lines(), "{name}");
    }
}

#[test]
fn progress_bar_carriage_returns_end_segments_but_not_lines() {
    let log = b"step 1\n 10%|#   | 1/10\r 20%|##  | 2/10\rKilled\nnext\n";
    let s = scan(log);
    assert_eq!(s.matches().len(), 1);
    assert_eq!(s.matches()[0].line_no, 2);
    assert_eq!(s.matches()[0].line, "Killed");
    assert_eq!(s.lines(), 3);
}

#[test]
fn non_utf8_bytes_are_kept_as_escapes() {
    let log = b"x\xff\xfe garbage \xc3\x28\nOut of memory: Killed process 77 (py\xe9thon) total-vm:1024kB, anon-rss:2048kB, file-rss:0kB\n";
    let s = scan(log);
    let f = only_finding(&s, FailureClass::OomKill);
    assert_eq!(s.matches()[0].line_no, 2);
    assert!(s.matches()[0].line.contains("(py\\xe9thon)"));
    assert_eq!(evidence(&f, "anon-rss"), "2.0 MiB");
}

#[test]
fn a_10_mb_line_is_cut_and_costs_no_more() {
    let mut log = vec![b'x'; 10 << 20];
    log.extend_from_slice(b" Killed\n");
    log.extend_from_slice(b"Out of memory: Killed process 9 (python) total-vm:4kB, anon-rss:4kB\n");
    // Starts with a failure, then goes on for 10 MB.
    log.extend_from_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered ");
    log.extend(std::iter::repeat_n(b'y', 10 << 20));
    log.push(b'\n');
    // A literal far past the examined prefix does not count, however it is cut.
    log.extend(std::iter::repeat_n(b'z', 3 * MAX_LINE));
    log.extend_from_slice(b"CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    for s in [
        scan(&log),
        scan_chunked(&log, 9, 1 << 16),
        scan_chunked(&log, 10, 100_000),
    ] {
        let m = s.matches();
        assert_eq!(m.len(), 2, "{m:#?}");
        assert_eq!((m[0].rule, m[0].line_no), ("kernel.oom-killed-process", 2));
        assert_eq!((m[1].rule, m[1].line_no), ("cuda.illegal-address", 3));
        assert!(m[1].line.len() <= MAX_LINE + '…'.len_utf8());
        assert!(m[1].line.ends_with('…'));
        assert_eq!(s.lines(), 4);
    }
}

#[test]
fn matches_are_bounded_but_counted() {
    let mut log = Vec::new();
    for i in 0..10_000 {
        log.extend_from_slice(format!("epoch {i}\nKilled\n").as_bytes());
    }
    let s = scan(&log);
    assert_eq!(s.matches().len(), 16);
    assert_eq!(s.matches()[0].line_no, 2);
    assert_eq!(s.matches()[7].line_no, 16);
    assert_eq!(s.matches()[8].line_no, 20_000 - 14);
    assert_eq!(s.matches()[15].line_no, 20_000);
    assert_eq!(s.rule_counts()[0].count, 10_000);
    let f = only_finding(&s, FailureClass::Sigkill);
    assert_eq!(
        evidence(&f, "matching lines"),
        "10000 lines (first at line 2, last at line 20000)"
    );
}

#[test]
fn matches_serialize_with_snake_case_class_and_named_captures() {
    let s = scan_fixture("dataloader-worker-killed.log");
    let v = serde_json::to_value(s.matches()).unwrap();
    assert_eq!(v[0]["class"], "dataloader_worker_killed");
    assert_eq!(v[0]["rule"], "dataloader.worker-sigkill");
    assert_eq!(v[0]["line_no"], 4);
    assert_eq!(v[0]["captures"][0]["name"], "pid");
    assert_eq!(v[0]["captures"][0]["value"], "31337");
}

mod chunking {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of real failure lines, line ends and odd bytes, so random logs hit the
    /// rules, the faulthandler block and the line-cutting paths.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"Killed".to_vec()),
            Just(b"Out of memory: Killed process 12 (py) total-vm:8kB, anon-rss:4kB".to_vec()),
            Just(b"Fatal Python error: Segmentation fault".to_vec()),
            Just(b"Current thread 0x01 (most recent call first):".to_vec()),
            Just(b"  File \"/a/b.py\", line 3 in f".to_vec()),
            Just(b"CUDA out of memory. Tried to allocate 2.00 GiB.".to_vec()),
            Just(b"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, gone".to_vec()),
            Just(b"\xff\xfe\xc3".to_vec()),
            Just(vec![b'x'; 1500]),
            proptest::collection::vec(any::<u8>(), 0..40),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn random_logs_give_the_same_answer_however_they_are_cut(
            pieces in proptest::collection::vec(piece(), 0..40),
            seed in any::<u64>(),
            max in 1usize..5000,
        ) {
            let log: Vec<u8> = pieces.concat();
            let whole = scan(&log);
            let chunked = scan_chunked(&log, seed, max);
            prop_assert_eq!(whole.matches(), chunked.matches());
            prop_assert_eq!(whole.findings(), chunked.findings());
            prop_assert_eq!(whole.lines(), chunked.lines());
            // Each kept byte is at most `\xNN`, plus the cut mark.
            prop_assert!(whole.matches().iter().all(|m| m.line.len() <= 4 * MAX_LINE + 3));
        }
    }
}

#[test]
fn a_region_searched_in_parallel_finds_what_small_chunks_find() {
    // Fed whole, a region over 1 MiB is searched by the prefilter groups in parallel;
    // fed in small chunks, group by group. Every fixture's failures, spread through
    // 8 MiB of healthy lines, must come out the same either way.
    let mut log = Vec::new();
    for (_, bytes) in all_fixtures() {
        for i in 0..2000 {
            log.extend_from_slice(
                format!("step {i} | loss 0.5 | killed_frac=0.1 | peak memory 3.1 GiB\n").as_bytes(),
            );
        }
        log.extend_from_slice(&bytes);
        log.push(b'\n');
    }
    let whole = scan(&log);
    let chunked = scan_chunked(&log, 7, 4096);
    assert!(whole.matches().len() > 20, "{}", whole.matches().len());
    assert_eq!(chunked.matches(), whole.matches());
    assert_eq!(chunked.findings(), whole.findings());
    assert_eq!(chunked.lines(), whole.lines());
}
