//! `memtriage bench load`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use memtriage_core::pagecache::bench;
use memtriage_core::parse::size::parse_size;

use super::Context;
use crate::cli::BenchLoadArgs;
use crate::render;

/// Removes the synthetic checkpoint however the benchmark ends.
struct Generated(std::path::PathBuf);

impl Drop for Generated {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub fn load(_ctx: &Context, args: &BenchLoadArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let chatty = !args.json && std::io::stderr().is_terminal();
    let mut generated = None;
    let path = match &args.file {
        Some(f) => {
            if !std::fs::metadata(f).map(|m| m.is_file()).unwrap_or(false) {
                anyhow::bail!("{}: not a readable regular file", f.display());
            }
            f.clone()
        }
        None => {
            let size = parse_size(&args.size).map_err(|e| anyhow::anyhow!("--size: {e}"))?;
            let path = args.dir.join(format!(
                "memtriage-bench-{}.safetensors",
                std::process::id()
            ));
            if chatty {
                eprintln!(
                    "writing a {} synthetic checkpoint to {}",
                    render::units::iec(size),
                    path.display()
                );
            }
            let guard = Generated(path.clone());
            bench::generate(&path, size)?;
            generated = Some(guard);
            path
        }
    };
    let result = bench::run(&path, generated.is_some(), &mut |step| {
        if chatty {
            eprintln!("  {step}");
        }
    })?;
    drop(generated);
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &result)?;
        writeln!(out)?;
    } else {
        render::bench::write(out, &result)?;
    }
    Ok(ExitCode::SUCCESS)
}
