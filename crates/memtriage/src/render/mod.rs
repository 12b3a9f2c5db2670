//! Turning the engine's reports into text for people, and the printer that carries it
//! to stdout and stderr, each with its own colour decision (`printer`, `style`). Reads
//! only what it is given: model types and use-case reports, never command-line
//! arguments. All the command's text is here, one file per command plus the shared
//! `findings`, `table`, `units` and `progress`.

pub mod bench;
pub mod cache;
pub mod doctor;
pub mod explain;
pub mod findings;
pub mod html;
pub mod inspect;
pub mod lines;
pub mod metrics;
pub mod printable;
pub mod printer;
pub mod progress;
pub mod run;
pub mod snapshot;
pub mod style;
pub mod table;
pub mod top;
pub mod units;
pub mod wrap;
