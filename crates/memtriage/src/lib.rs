//! The `memtriage` command: parses arguments, asks the engine, renders what it gets.
//! It never reads /proc itself.
//!
//! - `cli`: the arguments; `values`: their typed option values.
//! - `commands/`: one module per subcommand, returning an [`exit::ExitStatus`].
//! - `render/`: all text for people, and the printer (stdout and stderr, each with
//!   its own colour decision).
//! - `exit`: how a command ended, and the one conversion to a process exit code.

pub mod cli;
pub mod commands;
pub mod exit;
pub mod render;
pub mod values;

use std::ffi::OsString;
use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;

use clap::Parser;

use cli::Cli;
use exit::ExitStatus;
use render::printer::Printer;

/// The binary's entry point.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    // `run` says a panic is a bug and how to report it; the default hook's
    // "thread 'main' panicked" and backtrace hint would only repeat it less clearly.
    // Asked for a backtrace, the default hook still gives one.
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        panic::set_hook(Box::new(|_| {}));
    }
    run(args).into()
}

/// Runs one command line to its end and says how it ended; everything it had to say
/// is written. The Python package's `memtriage` entry point calls this too.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitStatus {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitStatus::BadInput
            } else {
                // --help, --version
                ExitStatus::Success
            };
        }
    };
    let mut printer = Printer::stdio(cli.color);
    guarded(&mut printer, |p| {
        let status = commands::run(&cli, p)?;
        p.out.flush()?;
        Ok(status)
    })
}

/// Runs a command and turns whatever ended it, an error or a panic, into its status
/// after telling the user.
fn guarded(
    p: &mut Printer,
    command: impl FnOnce(&mut Printer) -> anyhow::Result<ExitStatus>,
) -> ExitStatus {
    match panic::catch_unwind(AssertUnwindSafe(|| command(&mut *p))) {
        Ok(Ok(status)) => status,
        Ok(Err(e)) if is_broken_pipe(&e) => ExitStatus::Success,
        Ok(Err(e)) => {
            let _ = p.error(format_args!("{e:#}"));
            let bug = e
                .downcast_ref::<memtriage_core::Error>()
                .is_some_and(|e| e.kind() == memtriage_core::ErrorKind::Internal);
            if bug {
                ExitStatus::Internal
            } else {
                ExitStatus::BadInput
            }
        }
        Err(payload) => {
            let what = memtriage_core::Error::panic_message(&*payload);
            let _ = p.error(format_args!(
                "internal error: {what}\nThis is a bug in memtriage {}, not in your input or \
                 your machine. Please report it with the command you ran and this message \
                 (RUST_BACKTRACE=1 adds where it happened).",
                env!("CARGO_PKG_VERSION")
            ));
            ExitStatus::Internal
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

#[cfg(test)]
mod tests {
    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};

    use super::{guarded, ExitStatus};
    use crate::render::printer::{Printer, Stream};
    use crate::render::style::ColorChoice;

    /// A writer whose bytes the test can read after the printer is done with it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn printer() -> (Printer, Shared) {
        let err = Shared::default();
        let p = Printer {
            out: Stream::new(Box::new(Vec::new()), false, ColorChoice::Never, false),
            err: Stream::new(Box::new(err.clone()), false, ColorChoice::Never, false),
        };
        (p, err)
    }

    #[test]
    fn a_panic_is_an_internal_error_that_says_it_is_a_bug() {
        let (mut p, err) = printer();
        let status = guarded(&mut p, |_| panic!("index 7 out of range"));
        assert_eq!(status, ExitStatus::Internal);
        let text = String::from_utf8(err.0.lock().unwrap().clone()).unwrap();
        assert!(
            text.contains("internal error: index 7 out of range"),
            "{text}"
        );
        assert!(
            text.contains("bug in memtriage") && text.contains("report it"),
            "{text}"
        );
    }

    #[test]
    fn an_engine_bug_is_an_internal_error() {
        let (mut p, err) = printer();
        let status = guarded(&mut p, |_| {
            Err(memtriage_core::Error::internal("a reader thread panicked").into())
        });
        assert_eq!(status, ExitStatus::Internal);
        let text = String::from_utf8(err.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("a reader thread panicked"), "{text}");
    }

    #[test]
    fn an_error_is_bad_input_and_a_closed_pipe_is_not_an_error() {
        let (mut p, err) = printer();
        let status = guarded(&mut p, |_| {
            Err(anyhow::anyhow!("pid 4242: no such process"))
        });
        assert_eq!(status, ExitStatus::BadInput);
        let text = String::from_utf8(err.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "memtriage: pid 4242: no such process\n");
        let (mut p, _) = printer();
        let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(guarded(&mut p, |_| Err(pipe.into())), ExitStatus::Success);
    }
}
