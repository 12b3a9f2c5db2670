//! CUDA memory snapshots explained: the fixtures in `fixtures/cuda-snapshots`, built
//! by `make_snapshots.py` with the structure torch documents (no GPU was at hand).

use std::path::PathBuf;

use memtriage_core::model::finding::{Certainty, Severity};
use memtriage_core::usecase::explain_snapshot::{self, KnownOom};

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cuda-snapshots")
        .join(name)
}

#[test]
fn a_request_larger_than_every_free_piece_is_fragmentation() {
    let r = explain_snapshot::file(&fixture("fragmented.pickle"), None).unwrap();
    assert!(r.history_recorded);
    let d = &r.devices[0];
    assert_eq!(d.segments, 39);
    assert_eq!(d.reserved, 76 * GIB + 2 * MIB);
    assert_eq!(d.reserved_free, 37 * GIB + 512 * MIB + MIB);
    let large = d.pools.iter().find(|p| p.name == "large").unwrap();
    assert_eq!(large.largest_free_block, 1536 * MIB);
    let oom = d.oom.unwrap();
    assert_eq!(
        (oom.requested, oom.device_free),
        (4 * GIB, Some(2355 * MIB))
    );
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(f.id, "cuda-snapshot.fragmentation");
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.fix
            .contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
        "{}",
        f.fix
    );
    // The user's lines, not torch's: the innermost frame outside torch.
    assert_eq!(d.top_sites[0].site, "model.py:131 in forward");
    assert_eq!(d.top_sites[0].blocks, 19);
    assert!(f
        .evidence
        .iter()
        .any(|e| e.value.starts_with("model.py:88 in forward")));
}

#[test]
fn every_pickle_protocol_reads_the_same() {
    let four = explain_snapshot::file(&fixture("fragmented.pickle"), None).unwrap();
    let two = explain_snapshot::file(&fixture("fragmented-protocol2.pickle"), None).unwrap();
    assert_eq!(four.devices, two.devices);
    assert_eq!(four.findings, two.findings);
}

#[test]
fn tensors_holding_nearly_everything_is_real_demand() {
    let r = explain_snapshot::file(&fixture("real-demand.pickle"), None).unwrap();
    let f = &r.findings[0];
    assert_eq!(f.id, "cuda-snapshot.real-demand");
    assert!(
        f.title.contains("8.0 GiB asked for, 6.5 GiB short"),
        "{}",
        f.title
    );
    assert_eq!(
        f.assessment.as_ref().unwrap().certainty,
        Certainty::Confirmed
    );
    assert!(!f.fix.contains("expandable_segments"));
    // Optimizer state allocated at train.py:52 is one of the holders named.
    assert!(r.devices[0]
        .top_sites
        .iter()
        .any(|s| s.site == "train.py:52 in step"));
}

#[test]
fn without_history_the_state_is_told_and_a_known_request_is_judged() {
    let r = explain_snapshot::file(&fixture("no-history.pickle"), None).unwrap();
    assert!(!r.history_recorded);
    assert_eq!(r.findings[0].id, "cuda-snapshot.state");
    assert_eq!(r.devices[0].pending_free, 2 * MIB);
    assert!(r.findings[0].fix.contains("_record_memory_history"));
    // "Tried to allocate 1.50 GiB": the 2 GiB free block fits it, so this snapshot
    // is not the moment of the failure.
    let fits = KnownOom {
        device: 0,
        requested: 3 * GIB / 2,
        device_free: None,
    };
    let r = explain_snapshot::file(&fixture("no-history.pickle"), Some(fits)).unwrap();
    assert_eq!(r.findings[0].id, "cuda-snapshot.state");
    assert!(
        r.findings[0].title.contains("would fit"),
        "{}",
        r.findings[0].title
    );
    let too_big = KnownOom {
        requested: 3 * GIB,
        ..fits
    };
    let r = explain_snapshot::file(&fixture("no-history.pickle"), Some(too_big)).unwrap();
    let f = &r.findings[0];
    assert_eq!(f.id, "cuda-snapshot.real-demand");
    // CUDA's free memory beyond the allocator is unknown: not confirmed.
    assert_eq!(f.assessment.as_ref().unwrap().certainty, Certainty::Likely);
    // CUDA had 4 GiB free for a 3 GiB request the allocator refused: its cap.
    let capped = KnownOom {
        device_free: Some(4 * GIB),
        ..too_big
    };
    let r = explain_snapshot::file(&fixture("no-history.pickle"), Some(capped)).unwrap();
    assert_eq!(r.findings[0].id, "cuda-snapshot.memory-cap");
    assert!(r.findings[0].fix.contains("fraction"));
}

#[test]
fn what_is_not_a_snapshot_is_refused_with_the_reason() {
    let err = |name: &str| {
        explain_snapshot::file(&fixture(name), None)
            .unwrap_err()
            .to_string()
    };
    assert!(err("not-a-snapshot.pickle").contains("the pickle holds no dict"));
    let bytes = std::fs::read(fixture("fragmented.pickle")).unwrap();
    for cut in [1, 100, bytes.len() / 2, bytes.len() - 1] {
        let e = explain_snapshot::bytes_of(&bytes[..cut], "cut.pickle", None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cut.pickle") && e.contains("truncated"),
            "{cut}: {e}"
        );
    }
    let e = explain_snapshot::bytes_of(b"segments: []", "x.txt", None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a pickle"), "{e}");
    let missing = explain_snapshot::file(&fixture("no-such.pickle"), None).unwrap_err();
    assert!(missing.to_string().contains("no-such.pickle"));
}
