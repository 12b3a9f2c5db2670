//! The printer: standard output and standard error, each a writer with its own
//! colour decision, taken when the writer is wrapped (as ripgrep does), so text bound
//! for stderr is coloured by whether stderr, not stdout, is a terminal.

use std::fmt::Display;
use std::io::{self, BufWriter, IsTerminal, Write};

use super::style::{ColorChoice, Style};

/// One output stream and what is known about where it goes.
pub struct Stream {
    writer: Box<dyn Write>,
    terminal: bool,
    style: Style,
    /// What a failed write names (`standard output: No space left on device`).
    name: Option<&'static str>,
    /// Columns a line may take (the terminal's, or $COLUMNS); `None`: no bound.
    width: Option<usize>,
}

impl Stream {
    /// `terminal`: whether this writer is a terminal; `no_color`: whether NO_COLOR is set.
    pub fn new(
        writer: Box<dyn Write>,
        terminal: bool,
        choice: ColorChoice,
        no_color: bool,
    ) -> Self {
        Stream {
            writer,
            terminal,
            style: Style::for_stream(choice, terminal, no_color),
            name: None,
            width: None,
        }
    }

    /// The same stream, its lines bounded to `width` columns.
    pub fn bounded(mut self, width: Option<usize>) -> Self {
        self.width = width;
        self
    }

    /// Columns a line may take, where something bounds them.
    pub fn width(&self) -> Option<usize> {
        self.width
    }

    /// The same stream, naming itself in the errors of its writes.
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// `e` with the stream's name before it; a closed pipe stays as it is (not an
    /// error to report: `| head`).
    fn named_error(&self, e: io::Error) -> io::Error {
        match self.name {
            Some(name) if e.kind() != io::ErrorKind::BrokenPipe => {
                io::Error::new(e.kind(), format!("{name}: {e}"))
            }
            _ => e,
        }
    }

    /// How to style text written to this stream.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Whether a person is watching: progress and chatter go only to a terminal.
    pub fn is_terminal(&self) -> bool {
        self.terminal
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf).map_err(|e| self.named_error(e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf).map_err(|e| self.named_error(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush().map_err(|e| self.named_error(e))
    }
}

pub struct Printer {
    /// Results: tables, JSON.
    pub out: Stream,
    /// Messages about the run: warnings, errors, progress, and `run`'s summary
    /// (the job owns stdout).
    pub err: Stream,
}

/// $COLUMNS where set (a user's choice, or a script's), else the terminal's width.
fn columns(stdout: &io::Stdout) -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(c).filter(|c| *c > 0);
    }
    if !stdout.is_terminal() {
        return None;
    }
    // SAFETY: TIOCGWINSZ fills a local winsize.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (rc == 0 && size.ws_col > 0).then_some(size.ws_col as usize)
}

impl Printer {
    /// This process's stdout and stderr.
    pub fn stdio(choice: ColorChoice) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let stdout = io::stdout();
        let stderr = io::stderr();
        Printer {
            // Buffered: a table is many small writes. Stderr is not, so a message
            // shows before a long wait (warm --lock holds until a signal).
            out: Stream::new(
                Box::new(BufWriter::new(stdout.lock())),
                stdout.is_terminal(),
                choice,
                no_color,
            )
            .named("standard output")
            .bounded(columns(&stdout)),
            err: Stream::new(
                Box::new(stderr),
                io::stderr().is_terminal(),
                choice,
                no_color,
            ),
        }
    }

    /// A problem worth telling, on stderr, after what stdout already holds.
    pub fn error(&mut self, message: impl Display) -> io::Result<()> {
        // What stdout already holds goes first; a stdout that cannot take it (a full
        // disk) must not swallow the message that says what went wrong.
        let _ = self.out.flush();
        let message = message.to_string();
        writeln!(
            self.err,
            "memtriage: {}",
            super::printable::printable_lines(&message)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{ColorChoice, Printer, Stream};

    fn printer(out_terminal: bool, err_terminal: bool, choice: ColorChoice) -> Printer {
        Printer {
            out: Stream::new(Box::new(Vec::new()), out_terminal, choice, false),
            err: Stream::new(Box::new(Vec::new()), err_terminal, choice, false),
        }
    }

    #[test]
    fn regression_stderr_is_coloured_by_stderr_not_stdout() {
        let p = printer(true, false, ColorChoice::Auto);
        assert!(p.out.style().color);
        assert!(!p.err.style().color, "stderr is a file: no escape codes");
        let p = printer(false, true, ColorChoice::Auto);
        assert!(!p.out.style().color);
        assert!(p.err.style().color);
        assert!(p.err.is_terminal() && !p.out.is_terminal());
    }

    #[test]
    fn a_choice_applies_to_both_streams() {
        let p = printer(false, false, ColorChoice::Always);
        assert!(p.out.style().color && p.err.style().color);
        let p = printer(true, true, ColorChoice::Never);
        assert!(!p.out.style().color && !p.err.style().color);
    }

    #[test]
    fn no_color_turns_off_both_terminals() {
        let p = Printer {
            out: Stream::new(Box::new(Vec::new()), true, ColorChoice::Auto, true),
            err: Stream::new(Box::new(Vec::new()), true, ColorChoice::Auto, true),
        };
        assert!(!p.out.style().color && !p.err.style().color);
    }
}
