//! Fake system roots for tests: files written below a test's own directory, and
//! captured trees copied into one. Shared by the engine's and the CLI's tests.

use std::path::Path;

/// Writes `bytes` at `rel` below `root` (a leading `/` is ignored), creating directories.
pub fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(rel.trim_start_matches('/'));
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
    std::fs::write(path, bytes).expect("write file");
}

/// Copies a captured tree into a test's own root, so one test can change a file.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}
