#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubegen::fuzz::list_body(data));
