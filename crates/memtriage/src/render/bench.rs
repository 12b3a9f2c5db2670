//! `bench load` results for people.

use std::io::{self, Write};
use std::path::Path;

use memtriage_core::model::bench::{LoadBench, Measurement, Method};

use super::table;
use memtriage_core::model::units::iec;

fn gbs(rate: f64) -> String {
    format!("{:.2} GB/s", rate / 1e9)
}

pub fn write(out: &mut dyn Write, b: &LoadBench) -> io::Result<()> {
    let gib = b.bytes as f64 / (1u64 << 30) as f64;
    writeln!(
        out,
        "{} ({}{}): the disk reads {} (O_DIRECT, 16 MiB requests, 4 in flight), memory copies {}",
        b.file,
        iec(b.bytes),
        if b.generated { ", synthetic" } else { "" },
        gbs(b.disk_read_bytes_per_second),
        gbs(b.memory_copy_bytes_per_second)
    )?;
    let mut t = table::new(
        &[
            "METHOD",
            "COLD",
            "GB/s",
            "% DISK",
            "FAULTS/GiB",
            "HOT",
            "GB/s",
            "% MEMCPY",
            "FAULTS/GiB",
        ],
        1,
    );
    for method in Method::ALL {
        let find = |cold: bool| {
            b.results
                .iter()
                .find(|m| m.method == method && m.cold == cold)
        };
        let (Some(c), Some(h)) = (find(true), find(false)) else {
            continue;
        };
        let per_gib =
            |m: &Measurement| format!("{:.0}", (m.minor_faults + m.major_faults) as f64 / gib);
        t.add_row(vec![
            method.label().to_string(),
            format!("{:.2} s", c.seconds),
            gbs(c.bytes_per_second),
            format!("{:.0}%", c.of_ceiling * 100.0),
            per_gib(c),
            format!("{:.3} s", h.seconds),
            gbs(h.bytes_per_second),
            format!("{:.0}%", h.of_ceiling * 100.0),
            per_gib(h),
        ]);
    }
    if let Some(c) = t.column_mut(0) {
        c.set_cell_alignment(comfy_table::CellAlignment::Left);
    }
    writeln!(out, "{}", table::to_string(&t))?;
    writeln!(
        out,
        "\nfaults per GiB show the page size the kernel mapped: ~262144 for 4 KiB pages, ~512 for 2 MiB folios\n\
         cold: one run each, evicted first; hot: the fastest of up to 5 runs"
    )
}

/// Before the benchmark writes its synthetic checkpoint (on stderr, to a terminal).
pub fn write_generating(err: &mut dyn Write, bytes: u64, path: &Path) -> io::Result<()> {
    writeln!(
        err,
        "writing a {} synthetic checkpoint to {}",
        iec(bytes),
        path.display()
    )
}

/// One step of the benchmark as it starts.
pub fn write_step(err: &mut dyn Write, step: &str) -> io::Result<()> {
    writeln!(err, "  {step}")
}
