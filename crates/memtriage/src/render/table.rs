//! Aligned, borderless tables, numbers right-aligned.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

pub fn new(header: &[&str], right_aligned_from: usize) -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().copied());
    for (i, col) in t.column_iter_mut().enumerate() {
        if i >= right_aligned_from {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Tables print with a leading space per row; trim it so columns start at the margin.
pub fn to_string(t: &Table) -> String {
    t.lines()
        .map(|l| l.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The columns left for the last column of `rows` under `header` in a line of `width`
/// (each column takes its widest cell and a space either side), at least 12: a command
/// cut shorter says nothing.
pub fn room_for_last(header: &[&str], rows: &[Vec<String>], width: usize) -> usize {
    let others = header.len().saturating_sub(1);
    let taken: usize = (0..others)
        .map(|i| {
            let widest = rows
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0);
            widest + 2
        })
        .sum();
    width.saturating_sub(taken + 1).max(12)
}
