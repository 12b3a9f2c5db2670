//! The machine's memory history, kept for `memtriage record` and read by `why` and
//! `report --db`: a bounded SQLite database (`store`), written one interval per
//! transaction and trimmed by age and size, oldest first. The rows it holds are
//! `model::history`'s (the watch builds them from its view: `watch::intervals`);
//! `why`'s report is `model::why`'s.

pub mod read;
pub mod store;
pub mod why;
pub mod window;
