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
fn markers_corpus_replays_cleanly() {
    replay("markers", kubegen_codegen::fuzz::markers);
}

#[test]
fn crd_manifest_corpus_replays_cleanly() {
    replay("crd_manifest", kubegen_codegen::fuzz::crd_manifest);
}
