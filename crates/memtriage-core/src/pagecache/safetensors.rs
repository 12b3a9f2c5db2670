//! The header of a `.safetensors` file: an 8-byte little-endian length, then that
//! many bytes of JSON naming each tensor's dtype, shape and byte range. Only the
//! header is read, never the weights. Every inconsistency is an error that says what.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Headers are kilobytes to a few MiB; beyond this the length field is garbage.
pub const MAX_HEADER: u64 = 100 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<u64>,
    /// Byte range in the file (absolute, not relative to the data section).
    pub start: u64,
    pub end: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub header_bytes: u64,
    /// Where the data section begins: 8 + header_bytes.
    pub data_start: u64,
    /// Sorted by position in the file.
    pub tensors: Vec<Tensor>,
    pub metadata: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct RawTensor {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: [u64; 2],
}

fn dtype_bytes(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E4M3" | "F8_E5M2" | "F8_E8M0" => 1,
        "I16" | "U16" | "F16" | "BF16" => 2,
        "I32" | "U32" | "F32" => 4,
        "I64" | "U64" | "F64" | "C64" => 8,
        _ => return None,
    })
}

/// Validates a header against the file's size. `json` is the header's bytes.
pub fn parse(file_size: u64, declared: u64, json: &[u8]) -> std::result::Result<Header, String> {
    let data_start = 8 + declared;
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(json).map_err(|e| format!("header is not a JSON object: {e}"))?;
    let data_bytes = file_size - data_start;
    let mut tensors = Vec::new();
    let mut metadata = BTreeMap::new();
    for (name, value) in map {
        if name == "__metadata__" {
            if let serde_json::Value::Object(m) = value {
                for (k, v) in m {
                    metadata.insert(
                        k,
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string()),
                    );
                }
            }
            continue;
        }
        let raw: RawTensor =
            serde_json::from_value(value).map_err(|e| format!("tensor {name:?}: {e}"))?;
        let [start, end] = raw.data_offsets;
        if start > end {
            return Err(format!(
                "tensor {name:?}: data_offsets [{start}, {end}] end before they start"
            ));
        }
        if end > data_bytes {
            return Err(format!(
                "tensor {name:?}: data_offsets [{start}, {end}] reach past the {data_bytes} data bytes the file has"
            ));
        }
        if let Some(size) = dtype_bytes(&raw.dtype) {
            let elements = raw
                .shape
                .iter()
                .try_fold(1u64, |acc, d| acc.checked_mul(*d));
            let needed = elements.and_then(|e| e.checked_mul(size));
            if needed != Some(end - start) {
                return Err(format!(
                    "tensor {name:?}: shape {:?} of {} needs {} bytes but data_offsets span {}",
                    raw.shape,
                    raw.dtype,
                    needed.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                    end - start
                ));
            }
        }
        tensors.push(Tensor {
            name,
            dtype: raw.dtype,
            shape: raw.shape,
            start: data_start + start,
            end: data_start + end,
        });
    }
    tensors.sort_by(|a, b| a.start.cmp(&b.start).then(a.end.cmp(&b.end)));
    for pair in tensors.windows(2) {
        if pair[1].start < pair[0].end {
            return Err(format!(
                "tensors {:?} and {:?} overlap",
                pair[0].name, pair[1].name
            ));
        }
    }
    Ok(Header {
        header_bytes: declared,
        data_start,
        tensors,
        metadata,
    })
}

/// Reads and validates the header of `path`; errors name the file and the problem.
pub fn read_header(path: &Path) -> Result<Header> {
    let bad = |msg: String| {
        Error::bad_input(
            path.display().to_string(),
            format!("not a valid safetensors file: {msg}"),
        )
    };
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if size < 8 {
        return Err(bad(format!(
            "{size} bytes, too short for the 8-byte header length"
        )));
    }
    let mut len = [0u8; 8];
    file.read_exact(&mut len).map_err(|e| Error::io(path, e))?;
    let declared = u64::from_le_bytes(len);
    if declared > MAX_HEADER {
        return Err(bad(format!(
            "header length {declared} is implausible (over {MAX_HEADER} bytes)"
        )));
    }
    if declared > size - 8 {
        return Err(bad(format!(
            "header length {declared} is more than the {} bytes after it",
            size - 8
        )));
    }
    let mut json = vec![0u8; declared as usize];
    file.read_exact(&mut json).map_err(|e| Error::io(path, e))?;
    parse(size, declared, &json).map_err(bad)
}

pub fn is_safetensors(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "safetensors")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: usize) -> (u64, u64, Vec<u8>) {
        let h = header.as_bytes().to_vec();
        ((8 + h.len() + data) as u64, h.len() as u64, h)
    }

    #[test]
    fn tensors_come_sorted_with_absolute_offsets() {
        let (size, n, h) = file(
            r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}"#,
            16,
        );
        let hdr = parse(size, n, &h).unwrap();
        assert_eq!(hdr.tensors[0].name, "a");
        assert_eq!(hdr.tensors[0].start, 8 + n);
        assert_eq!(hdr.tensors[1].end, 8 + n + 16);
        assert_eq!(hdr.metadata["format"], "pt");
    }

    #[test]
    fn every_inconsistency_is_named() {
        let cases = [
            (r#"not json"#, 0, "not a JSON object"),
            (
                r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
                8,
                "reach past",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}"#,
                8,
                "end before they start",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
                8,
                "needs 12 bytes",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}}"#,
                12,
                "overlap",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[18446744073709551615,4],"data_offsets":[0,8]}}"#,
                8,
                "more than 2^64",
            ),
            (r#"{"a":{"shape":[2]}}"#, 8, "missing field"),
        ];
        for (json, data, needle) in cases {
            let (size, n, h) = file(json, data);
            let err = parse(size, n, &h).unwrap_err();
            assert!(err.contains(needle), "{json}: {err}");
        }
    }

    #[test]
    fn unknown_dtypes_are_kept_without_a_size_check() {
        let (size, n, h) = file(
            r#"{"a":{"dtype":"Q4_K","shape":[3],"data_offsets":[0,5]}}"#,
            5,
        );
        assert_eq!(parse(size, n, &h).unwrap().tensors[0].dtype, "Q4_K");
    }
}
