//! What cargo does not build for a test: a binary or a library of another package of
//! the workspace. Shared by the engine's tests (through `support`) and the CLI's
//! (`cli/support` includes this file).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// `file`, built by the workspace's package `package`, brought up to date once per
/// test binary (cargo builds no binary or cdylib of another package for a test, and a
/// stale one lacks the newest steps): `target/PROFILE/FILE`, beside `deps/`, where the
/// test runs from.
pub fn built(package: &str, file: &str) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    let mut dir = std::env::current_exe().expect("test executable path");
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    if !built.iter().any(|p| p == package) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        // In the profile the test was built in (`cargo test --release` looks in
        // target/release).
        let release = dir.ends_with("release").then_some("--release");
        let status = Command::new(cargo)
            .args(["build", "-p", package])
            .args(release)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building {package} failed");
        built.push(package.to_string());
    }
    dir.join(file)
}

/// `libmemtriage_fake_nvml.so`, the workspace's stand-in for libnvidia-ml: loaded
/// through `MEMTRIAGE_NVML_LIB`, it answers NVML's calls from the JSON file
/// `FAKE_NVML_CONFIG` names.
pub fn fake_nvml() -> PathBuf {
    built("memtriage-fake-nvml", "libmemtriage_fake_nvml.so")
}
