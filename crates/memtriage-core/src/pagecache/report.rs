//! Everything `cache` says about one file, collected in one place for any renderer.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::mappers::{self, Mapper};
use super::residency::{Meter, Method, Residency};
use super::safetensors;
use crate::error::Result;
use crate::probe::root::Root;

pub const CACHE_SCHEMA: &str = "memtriage.cache/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorResidency {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<u64>,
    pub bytes: u64,
    pub cached: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileReport {
    pub path: String,
    pub size: u64,
    pub cached: u64,
    pub dirty: Option<u64>,
    pub method: Method,
    /// Cached share of each of up to `segments` consecutive parts of the file (split on
    /// page boundaries; fewer for a file of fewer pages), 0.0 to 1.0.
    pub segments: Vec<f64>,
    /// Per tensor, for `.safetensors` files whose header is valid.
    pub tensors: Option<Vec<TensorResidency>>,
    /// Why `tensors` is missing for a `.safetensors` file.
    pub tensors_error: Option<String>,
    pub mapped_by: Vec<Mapper>,
}

impl FileReport {
    pub fn fraction(&self) -> f64 {
        if self.size == 0 {
            0.0
        } else {
            self.cached as f64 / self.size as f64
        }
    }
}

pub fn inspect(
    root: &Root,
    path: &Path,
    segments: usize,
    with_mappers: bool,
) -> Result<FileReport> {
    let meter = Meter::open(path)?;
    if let Some((why, fix)) = meter.unknown_reason() {
        return Err(crate::error::Error::refused(
            path.display().to_string(),
            format!("residency unknown: {why}"),
            fix,
        ));
    }
    let size = meter.size();
    let parts = meter.parts(segments);
    let whole = if parts.is_empty() {
        meter.whole()
    } else {
        parts.iter().copied().sum()
    };
    let segs = parts.iter().map(Residency::fraction).collect();
    let (tensors, tensors_error) = if safetensors::is_safetensors(path) {
        match safetensors::read_header_untouched(path, &meter) {
            Ok(h) => (
                Some(
                    h.tensors
                        .into_iter()
                        .map(|t| {
                            let r = meter.range(t.start, t.end - t.start);
                            TensorResidency {
                                name: t.name,
                                dtype: t.dtype,
                                shape: t.shape,
                                bytes: t.end - t.start,
                                cached: r.cached,
                            }
                        })
                        .collect(),
                ),
                None,
            ),
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    Ok(FileReport {
        path: path.display().to_string(),
        size,
        cached: whole.cached,
        dirty: whole.dirty,
        method: meter.method(),
        segments: segs,
        tensors,
        tensors_error,
        mapped_by: if with_mappers {
            mappers::find(root, path)
        } else {
            Vec::new()
        },
    })
}
