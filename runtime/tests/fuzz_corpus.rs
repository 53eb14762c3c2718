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
fn watch_stream_corpus_replays_cleanly() {
    replay("watch_stream", kubegen::fuzz::watch_stream);
}

#[test]
fn list_body_corpus_replays_cleanly() {
    replay("list_body", kubegen::fuzz::list_body);
}

#[test]
fn kubeconfig_corpus_replays_cleanly() {
    replay("kubeconfig", kubegen::fuzz::kubeconfig);
}
