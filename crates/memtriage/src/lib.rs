//! The `memtriage` command: parses arguments, asks the engine, renders what it gets.
//! It never reads /proc itself.

pub mod cli;
pub mod commands;
pub mod render;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

pub use cli::Cli;

/// Exit codes (DESIGN.md): 0 ok, 1 a finding at error severity where the command
/// judges, 2 bad usage or input.
pub const EXIT_FINDING: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = commands::run(&cli, &mut out).and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = out.flush();
            let _ = writeln!(io::stderr(), "memtriage: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// `memtriage inspect --all | head` closes our stdout early: that is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
