#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubegen_testserver::fuzz::request(data));
