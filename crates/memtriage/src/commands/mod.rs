//! One module per subcommand. Each turns its arguments into a request, calls the
//! engine's use case, hands the report to `render/` through the printer (or prints
//! it as JSON), and returns how it ended as an [`ExitStatus`].

mod bench;
mod cache;
mod doctor;
mod explain;
mod explain_snapshot;
mod inspect;
mod record;
mod report;
mod run;
mod serve;
mod stop;
mod top;
mod why;
mod why_slurm;

use memtriage_core::Root;

use crate::cli::{BenchCommand, Cli, Command};
use crate::exit::ExitStatus;
use crate::render::printer::Printer;

pub struct Context {
    pub root: Root,
}

/// An engine error about the history's database `db`, said with the option that
/// names it (the engine's messages name no option: Python has none); an error about
/// anything else (a pid) is said as it is.
pub fn history_error(
    e: memtriage_core::Error,
    option: &str,
    db: &std::path::Path,
) -> anyhow::Error {
    let about_the_database = e.to_string().contains(&db.display().to_string());
    if e.kind() == memtriage_core::ErrorKind::Internal || !about_the_database {
        return e.into();
    }
    anyhow::anyhow!("{e} ({option} PATH names the database)")
}

pub fn run(cli: &Cli, p: &mut Printer) -> anyhow::Result<ExitStatus> {
    let ctx = Context {
        root: cli.root.as_ref().map(Root::at).unwrap_or_else(Root::host),
    };
    match &cli.command {
        Command::Inspect(args) => inspect::run(&ctx, args, p),
        Command::Doctor(args) => doctor::run(&ctx, args, p),
        Command::Run(args) => run::run(&ctx, args, p),
        Command::Cache(args) => cache::cache(&ctx, args, p),
        Command::Warm(args) => cache::warm(&ctx, args, p),
        Command::Evict(args) => cache::evict(&ctx, args, p),
        Command::Bench(BenchCommand::Load(args)) => bench::load(&ctx, args, p),
        Command::Report(args) => report::run(&ctx, args, p),
        Command::Explain(args) => explain::run(&ctx, args, p),
        Command::ExplainSnapshot(args) => explain_snapshot::run(args, p),
        Command::Serve(args) => serve::run(&ctx, args, p),
        Command::Top(args) => top::run(&ctx, args, p),
        Command::Record(args) => record::run(&ctx, args, p),
        Command::Why(args) => match args.slurm_job {
            Some(id) => why_slurm::run(&ctx, args, id, p),
            None => why::run(args, p),
        },
    }
}
