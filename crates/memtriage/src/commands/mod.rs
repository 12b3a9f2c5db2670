//! One module per subcommand; each returns the exit code and writes to `out`.

mod bench;
mod cache;
mod doctor;
mod explain;
pub mod inspect;
mod report;
mod run;

use std::io::Write;
use std::process::ExitCode;

use memtriage_core::Root;

use crate::cli::{Cli, Command};
use crate::render::style::Style;

pub struct Context {
    pub root: Root,
    pub style: Style,
}

pub fn run(cli: &Cli, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let ctx = Context {
        root: cli.root.as_ref().map(Root::at).unwrap_or_else(Root::host),
        style: Style::detect(cli.color),
    };
    match &cli.command {
        Command::Inspect(args) => inspect::run(&ctx, args, out),
        Command::Doctor(args) => doctor::run(&ctx, args, out),
        Command::Run(args) => run::run(&ctx, args),
        Command::Cache(args) => cache::cache(&ctx, args, out),
        Command::Warm(args) => cache::warm(&ctx, args, out),
        Command::Evict(args) => cache::evict(&ctx, args, out),
        Command::Bench(crate::cli::BenchCommand::Load(args)) => bench::load(&ctx, args, out),
        Command::Report(args) => report::run(&ctx, args, out),
        Command::Explain(args) => explain::run(&ctx, args, out),
    }
}
