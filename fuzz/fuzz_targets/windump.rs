#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| memtriage_core::fuzz::windows_dump(data));
