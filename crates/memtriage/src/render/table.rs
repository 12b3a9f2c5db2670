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
