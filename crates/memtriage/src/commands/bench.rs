//! `memtriage bench load`.

use std::io::Write;

use memtriage_core::usecase::bench;

use super::Context;
use crate::cli::BenchLoadArgs;
use crate::exit::ExitStatus;
use crate::render;
use crate::render::printer::Printer;

/// Removes the synthetic checkpoint however the benchmark ends.
struct Generated(std::path::PathBuf);

impl Drop for Generated {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// An interrupted benchmark (Ctrl-C, SIGTERM) still removes the checkpoint it wrote
/// (1–2 GiB): the signal's default action would end the process before any destructor,
/// so a thread waits for the stop, removes the file and exits as the signal would have.
fn remove_when_stopped(path: std::path::PathBuf) {
    super::stop::install();
    std::thread::spawn(move || {
        super::stop::wait();
        let _ = std::fs::remove_file(&path);
        std::process::exit(super::stop::exit_code());
    });
}

pub fn load(_ctx: &Context, args: &BenchLoadArgs, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let chatty = !args.json && p.err.is_terminal();
    let mut generated = None;
    let path = match &args.file {
        Some(f) => {
            if !std::fs::metadata(f).map(|m| m.is_file()).unwrap_or(false) {
                anyhow::bail!("{}: not a readable regular file", f.display());
            }
            f.clone()
        }
        None => {
            let size = args.size.0;
            bench::check_synthetic(&args.dir, size)?;
            let path = args.dir.join(format!(
                "memtriage-bench-{}.safetensors",
                std::process::id()
            ));
            if chatty {
                render::bench::write_generating(&mut p.err, size, &path)?;
            }
            let guard = Generated(path.clone());
            remove_when_stopped(path.clone());
            bench::generate(&path, size)?;
            generated = Some(guard);
            path
        }
    };
    let err = &mut p.err;
    let result = bench::run(&path, generated.is_some(), &mut |step| {
        if chatty {
            // Progress lost to a closed stderr is no reason to stop the measurement.
            let _ = render::bench::write_step(err, step);
        }
    })?;
    drop(generated);
    if args.json {
        serde_json::to_writer_pretty(&mut p.out, &result)?;
        writeln!(p.out)?;
    } else {
        render::bench::write(&mut p.out, &result)?;
    }
    Ok(ExitStatus::Success)
}
