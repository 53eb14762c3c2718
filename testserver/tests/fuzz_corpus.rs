//! The fuzz corpus of this crate's targets (`fuzz/corpus/<target>/`, seeds plus what
//! `hack/fuzz.sh` found worth keeping, and `fuzz/regressions/<target>/`, inputs that once
//! crashed) replayed on stable through the same entry functions the fuzz targets call:
//! a crash the fuzzer found stays fixed, and CI runs without nightly.

use std::path::Path;

fn replay(target: &str, entry: fn(&[u8])) {
    let fuzz_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    kubegen::fuzz::replay_corpus(&fuzz_dir, target, entry);
}

#[test]
fn selectors_corpus_replays_cleanly() {
    replay("selectors", kubegen_testserver::fuzz::selectors);
}

#[test]
fn request_corpus_replays_cleanly() {
    replay("request", kubegen_testserver::fuzz::request);
}
