//! Colour only on a terminal, and never when NO_COLOR is set (no-color.org).

use std::io::IsTerminal;

use memtriage_core::model::finding::Severity;

use crate::cli::ColorChoice;

#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn detect(choice: ColorChoice) -> Self {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
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
