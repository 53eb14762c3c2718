#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kubegen::fuzz::kubeconfig(data));
