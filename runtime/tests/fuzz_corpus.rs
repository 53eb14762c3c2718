//! The fuzz corpus of this crate's targets (`fuzz/corpus/<target>/`, seeds plus what
//! `hack/fuzz.sh` found worth keeping, and `fuzz/regressions/<target>/`, inputs that once
//! crashed) replayed on stable through the same entry functions the fuzz targets call:
//! a crash the fuzzer found stays fixed, and CI runs without nightly.

use std::path::Path;

fn replay(target: &str, entry: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut replayed = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).expect("readable corpus file");
            let outcome = std::panic::catch_unwind(|| entry(&data));
            assert!(outcome.is_ok(), "{} panics", path.display());
            replayed += 1;
        }
    }
    assert!(
        replayed > 0,
        "no corpus for {target} under {}",
        root.display()
    );
}

#[test]
fn watch_stream_corpus_replays_cleanly() {
    replay("watch_stream", kubegen::fuzz::watch_stream);
}

#[test]
fn list_body_corpus_replays_cleanly() {
    replay("list_body", kubegen::fuzz::list_body);
}
