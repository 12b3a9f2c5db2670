//! Filled in by the doctor work.
