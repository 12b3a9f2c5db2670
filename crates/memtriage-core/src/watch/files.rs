//! Page-cache residency of the files a watcher was given, and of each tensor of a
//! `.safetensors` file when asked: whether a model is still warm.

use std::path::{Path, PathBuf};

use crate::pagecache::residency::Meter;
use crate::pagecache::safetensors::{is_safetensors, read_header_untouched};

#[derive(Debug, Clone, PartialEq)]
pub struct FileView {
    pub path: PathBuf,
    pub size: Option<u64>,
    /// `None` where residency cannot be told (not readable; mincore without rights).
    pub cached: Option<u64>,
    /// Why the figures are missing, where they are.
    pub error: Option<String>,
    pub tensors: Vec<TensorView>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TensorView {
    pub name: String,
    pub size: u64,
    pub cached: u64,
}

pub fn read(paths: &[PathBuf], tensors: bool) -> Vec<FileView> {
    paths.iter().map(|p| read_one(p, tensors)).collect()
}

fn read_one(path: &Path, tensors: bool) -> FileView {
    let mut view = FileView {
        path: path.to_path_buf(),
        size: None,
        cached: None,
        error: None,
        tensors: Vec::new(),
    };
    let meter = match Meter::open(path) {
        Ok(m) => m,
        Err(e) => {
            view.error = Some(e.to_string());
            return view;
        }
    };
    view.size = Some(meter.size());
    if let Some((why, _)) = meter.unknown_reason() {
        view.error = Some(why);
        return view;
    }
    view.cached = Some(meter.whole().cached);
    if tensors && is_safetensors(path) {
        match read_header_untouched(path, &meter) {
            Ok(header) => {
                view.tensors = header
                    .tensors
                    .iter()
                    .map(|t| TensorView {
                        name: t.name.clone(),
                        size: t.end - t.start,
                        cached: meter.range(t.start, t.end - t.start).cached,
                    })
                    .collect();
            }
            Err(e) => view.error = Some(e.to_string()),
        }
    }
    view
}
