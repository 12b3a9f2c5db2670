//! Turning model data into text for people. Reads only what it is given.

pub mod bench;
pub mod cache;
pub mod findings;
pub mod html;
pub mod inspect;
pub mod run;
pub mod style;
pub mod table;
pub mod units;
