//! Every input the fuzz targets keep (`fuzz/corpus/TARGET`, their seeds in
//! `fuzz/seeds.txt`, and `fuzz/artifacts/TARGET`: inputs that once failed) run through
//! the same target bodies as the libFuzzer binaries, on any toolchain. Fuzzing itself
//! needs nightly (`fuzz/run.sh`); this keeps what it found.

use std::path::{Path, PathBuf};

use crate::fuzz as targets;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = repo();
    let mut dirs = vec![
        root.join("fuzz/corpus").join(target),
        root.join("fuzz/artifacts").join(target),
    ];
    let seeds = std::fs::read_to_string(root.join("fuzz/seeds.txt")).expect("fuzz/seeds.txt");
    for line in seeds.lines().filter(|l| !l.starts_with('#')) {
        if let Some((t, dir)) = line.split_once(char::is_whitespace) {
            if t == target {
                dirs.push(root.join(dir.trim()));
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        files_under(&d, &mut out);
    }
    out.sort();
    out
}

#[test]
fn every_kept_fuzz_input_passes_its_target() {
    let mut total = 0;
    for (name, target) in targets::TARGETS {
        let files = inputs(name);
        assert!(
            !files.is_empty(),
            "{name}: no inputs (seeds.txt names a missing directory?)"
        );
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let run = std::panic::catch_unwind(|| target(&bytes));
            assert!(run.is_ok(), "fuzz target {name} fails on {}", f.display());
        }
        total += files.len();
    }
    eprintln!("{total} inputs replayed");
}
