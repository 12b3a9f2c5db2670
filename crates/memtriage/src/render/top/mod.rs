//! `memtriage top`'s view: its state and keys (`app`), and its drawing (`draw`).

pub mod app;
pub mod draw;
