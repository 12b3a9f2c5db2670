//! Turning model data into text for people, and the printer that carries it to
//! stdout and stderr. Reads only what it is given: model types and the reports in
//! `crate::reports`, never command-line arguments. All the command's text is here.

pub mod bench;
pub mod cache;
pub mod doctor;
pub mod explain;
pub mod findings;
pub mod html;
pub mod inspect;
pub mod printer;
pub mod progress;
pub mod run;
pub mod style;
pub mod table;
pub mod units;
