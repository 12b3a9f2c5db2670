//! Colour: decided once per output stream, on a terminal only, and never when
//! NO_COLOR is set (no-color.org) unless asked for with `--color always`.

use clap::ValueEnum;
use memtriage_core::model::finding::Severity;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// The style of one stream: `terminal` is whether that stream (not another) is a
    /// terminal; `no_color` whether NO_COLOR is set to something.
    pub fn for_stream(choice: ColorChoice, terminal: bool, no_color: bool) -> Self {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !no_color,
        };
        Style { color }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn severity(&self, s: Severity) -> String {
        let code = match s {
            Severity::Ok => "32",
            Severity::Info => "36",
            Severity::Warn => "33",
            Severity::Error => "1;31",
        };
        self.paint(code, &format!("{:<5}", s.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::{ColorChoice, Style};

    #[test]
    fn auto_colours_a_terminal_only_and_never_under_no_color() {
        assert!(Style::for_stream(ColorChoice::Auto, true, false).color);
        assert!(!Style::for_stream(ColorChoice::Auto, false, false).color);
        assert!(!Style::for_stream(ColorChoice::Auto, true, true).color);
    }

    #[test]
    fn always_and_never_override_the_terminal_and_no_color() {
        assert!(Style::for_stream(ColorChoice::Always, false, true).color);
        assert!(!Style::for_stream(ColorChoice::Never, true, false).color);
    }
}
