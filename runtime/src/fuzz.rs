//! Entry points of the fuzz targets (`fuzz/`, `hack/fuzz.sh`) and of their corpus
//! regression tests (`runtime/tests/fuzz_corpus.rs`, on stable): the same function in
//! both, so a crash the fuzzer found stays fixed. Not public API.

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectList, WatchEvent};

use crate::client::{Error, LineDecoder, decode_lines};

/// A watch body as the server streams it: `data[0]` picks the chunk size, the rest is
/// the body, cut into chunks of that size and decoded line by line as the watch decoder
/// does. Every line yields one item (an event or an error); nothing panics.
pub fn watch_stream(data: &[u8]) {
    let Some((&size, body)) = data.split_first() else {
        return;
    };
    let size = usize::from(size).max(1);
    let chunks: Vec<Result<bytes::Bytes, crate::client::TransportError>> = body
        .chunks(size)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect();
    let items: Vec<Result<WatchEvent<ConfigMap>, Error>> =
        futures::executor::block_on(decode_lines(futures::stream::iter(chunks)).collect());
    // The same lines, counted without decoding.
    let mut lines = LineDecoder::new();
    let mut count = lines.push(body).len();
    count += usize::from(lines.finish().is_some());
    assert_eq!(items.len(), count, "one item per non-blank line");
}

/// A list page (or any answer body): decoded as a `ConfigMapList`, and read as an API
/// error body as a failed answer would be; nothing panics.
pub fn list_body(data: &[u8]) {
    let _ = serde_json::from_slice::<ObjectList<ConfigMap>>(data);
    for code in [400, 410, 500] {
        let code = http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::BAD_REQUEST);
        let err = Error::from_response(code, data);
        assert!(err.code().is_some());
    }
}

/// kubeconfig text (any bytes, read as UTF-8 with replacement): it parses or fails with a
/// `KubeconfigError`, never panics; what parses is formatted and a context chosen. (No
/// `Config` is built: that reads the files the text names.)
pub fn kubeconfig(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match crate::client::Kubeconfig::from_yaml(&text) {
        Ok(kc) => {
            let _ = format!("{kc:?}");
            if let Ok(sel) = kc.select(&Default::default()) {
                assert!(!sel.server().is_empty(), "a selected cluster has a server");
                let _ = sel.namespace();
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// Replays `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` under `fuzz_dir`
/// through `entry`, in file-name order; panics naming the first input that panics, or
/// when there is no input at all. Every crate's `tests/fuzz_corpus.rs` calls this.
pub fn replay_corpus(fuzz_dir: &std::path::Path, target: &str, entry: fn(&[u8])) {
    let mut replayed = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir.join(dir).join(target)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            #[allow(clippy::expect_used)] // a test helper over committed files
            let data = std::fs::read(&path).expect("readable corpus file");
            let outcome = std::panic::catch_unwind(|| entry(&data));
            assert!(outcome.is_ok(), "{} panics", path.display());
            replayed += 1;
        }
    }
    assert!(
        replayed > 0,
        "no corpus for {target} under {}",
        fuzz_dir.display()
    );
}
