//! A pickled `torch.cuda.memory._snapshot()` (what `_dump_snapshot` writes, any
//! pickle protocol) into [`CudaSnapshot`]. A snapshot holds dicts, lists, tuples,
//! strings and integers; anything else a pickle names is never imported or run
//! (see [`pickle`]).

use crate::model::cuda_snapshot::{Block, BlockState, CudaSnapshot, Frame, Segment, TraceEntry};
use crate::parse::pickle::{self, Py};

/// Why a file that starts so is not a snapshot; `None` when it may be one. Told from
/// the first byte, so a large file that is no pickle is refused before it is read.
pub fn refuse_start(start: &[u8]) -> Option<String> {
    let Some(&first) = start.first() else {
        return Some("the file is empty".into());
    };
    // PROTO (protocol 2 and later), or protocol 0 and 1's MARK, EMPTY_DICT, EMPTY_LIST.
    if first != 0x80 && !matches!(first, b'(' | b'}' | b']') {
        return Some(
            "not a pickle (a snapshot is written by torch.cuda.memory._dump_snapshot)".into(),
        );
    }
    None
}

/// Why bytes are not a snapshot, in words for people.
pub fn parse(bytes: &[u8]) -> Result<CudaSnapshot, String> {
    if let Some(why) = refuse_start(bytes) {
        return Err(why);
    }
    let read = pickle::read(bytes).map_err(|e| {
        if e.truncated() {
            "the pickle is truncated (the file ends before the snapshot does)".to_string()
        } else {
            format!("not a readable pickle: {e}")
        }
    })?;
    snapshot(&read.root)
}

fn snapshot(v: &Py) -> Result<CudaSnapshot, String> {
    if !v.is_dict() {
        return Err("the pickle holds no dict: not a CUDA memory snapshot".into());
    }
    let segments = v.get("segments").ok_or_else(|| {
        "no `segments` in the pickle: not a torch.cuda.memory._snapshot() dump".to_string()
    })?;
    // A segment without its size is no segment: saying "no history" over a list that
    // could not be read would be a verdict on nothing.
    let segments = segments
        .items()
        .ok_or("`segments` is not a list")?
        .iter()
        .enumerate()
        .map(|(i, s)| {
            segment(s).ok_or_else(|| {
                format!("segment {i} of `segments` is malformed (no dict with a `total_size`)")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let traces = v
        .get("device_traces")
        .and_then(|t| t.items())
        .map(|devices| {
            devices
                .iter()
                .map(|d| {
                    d.items()
                        .unwrap_or_default()
                        .iter()
                        .filter_map(trace_entry)
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let expandable_segments = v
        .get("allocator_settings")
        .and_then(|s| s.get("expandable_segments"))
        .and_then(|b| b.int())
        .map(|i| i != 0);
    Ok(CudaSnapshot {
        segments,
        traces,
        expandable_segments,
    })
}

fn unsigned(v: &Py, key: &str) -> Option<u64> {
    v.get(key)?.int().and_then(|i| u64::try_from(i).ok())
}

fn text(v: &Py, key: &str) -> Option<String> {
    v.get(key)?.str().map(str::to_string)
}

fn segment(v: &Py) -> Option<Segment> {
    let pool = v
        .get("segment_pool_id")
        .and_then(|p| p.items())
        .and_then(|p| {
            let id = |x: &Py| x.int().and_then(|i| i64::try_from(i).ok());
            Some((id(p.first()?)?, id(p.get(1)?)?))
        })
        .unwrap_or((0, 0));
    Some(Segment {
        device: unsigned(v, "device")
            .and_then(|i| u32::try_from(i).ok())
            .unwrap_or(0),
        address: unsigned(v, "address").unwrap_or(0),
        total_size: unsigned(v, "total_size")?,
        stream: unsigned(v, "stream").unwrap_or(0),
        large: text(v, "segment_type").is_none_or(|t| t != "small"),
        pool,
        expandable: v
            .get("is_expandable")
            .and_then(|b| b.int())
            .is_some_and(|i| i != 0),
        blocks: v
            .get("blocks")
            .and_then(|b| b.items())
            .unwrap_or_default()
            .iter()
            .filter_map(block)
            .collect(),
    })
}

fn block(v: &Py) -> Option<Block> {
    let state = match text(v, "state")?.as_str() {
        "active_allocated" => BlockState::Allocated,
        "active_awaiting_free" | "active_pending_free" => BlockState::PendingFree,
        "inactive" => BlockState::Inactive,
        _ => return None,
    };
    Some(Block {
        address: unsigned(v, "address").unwrap_or(0),
        size: unsigned(v, "size")?,
        requested_size: unsigned(v, "requested_size"),
        state,
        frames: frames(v),
    })
}

fn frames(v: &Py) -> Vec<Frame> {
    v.get("frames")
        .and_then(|f| f.items())
        .unwrap_or_default()
        .iter()
        .filter_map(|f| {
            Some(Frame {
                filename: text(f, "filename")?,
                line: unsigned(f, "line").unwrap_or(0),
                name: text(f, "name").unwrap_or_default(),
            })
        })
        .collect()
}

fn trace_entry(v: &Py) -> Option<TraceEntry> {
    Some(TraceEntry {
        action: text(v, "action")?,
        addr: unsigned(v, "addr"),
        size: unsigned(v, "size").unwrap_or(0),
        stream: unsigned(v, "stream").unwrap_or(0),
        device_free: unsigned(v, "device_free"),
        frames: frames(v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_snapshot_says_so() {
        assert_eq!(parse(b"").unwrap_err(), "the file is empty");
        assert!(parse(b"{\"segments\": []}")
            .unwrap_err()
            .starts_with("not a pickle"));
        // protocol 4, `{}` then STOP.
        let empty_dict = b"\x80\x04}\x94.";
        assert!(parse(empty_dict).unwrap_err().starts_with("no `segments`"));
        // The same cut before its STOP.
        assert!(
            parse(&empty_dict[..3]).unwrap_err().contains("truncated"),
            "{:?}",
            parse(&empty_dict[..3])
        );
    }
}
