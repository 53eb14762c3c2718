//! Entry points of the fuzz targets (`fuzz/`, `hack/fuzz.sh`) and of their corpus
//! regression tests (`testserver/tests/fuzz_corpus.rs`, on stable): the same function in
//! both, so a crash the fuzzer found stays fixed. Not public API.

use bytes::Bytes;

use crate::selectors::{FieldSelector, LabelSelector};

/// Arbitrary text as a `labelSelector` and as a `fieldSelector`: parsed or refused,
/// never a panic; what parses matches objects without panicking.
pub fn selectors(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let object = serde_json::json!({
        "metadata": {"name": "a", "namespace": "default", "labels": {"app": "x", "tier": ""}},
        "spec": {"nodeName": "n"},
    });
    if let Ok(selector) = LabelSelector::parse(&text) {
        let labels = std::collections::BTreeMap::from([("app".to_owned(), "x".to_owned())]);
        let _ = selector.matches(&labels);
        let _ = selector.matches_object(&object);
    }
    if let Ok(selector) = FieldSelector::parse(&text, &["spec.nodeName".to_owned()]) {
        let _ = selector.matches_object(&object);
    }
}

/// An arbitrary request to a fresh server: `METHOD PATH[?QUERY]` on the first line,
/// optionally `Content-Type: ...` on the second, then a blank line and the body. The
/// server answers (a watch's stream is dropped unread); it never panics.
pub fn request(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let Some((method, target)) = lines.next().and_then(|l| l.split_once(' ')) else {
        return;
    };
    let Ok(method) = http::Method::from_bytes(method.as_bytes()) else {
        return;
    };
    let mut builder = http::Request::builder().method(method).uri(target.trim());
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            builder = builder.header(name.trim(), value.trim());
        }
    }
    let Ok(request) = builder.body(Bytes::copy_from_slice(body.as_bytes())) else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        return;
    };
    let server = crate::InProcess::new();
    let reply = runtime.block_on(crate::chain::handle(server.shared(), request, None));
    assert!(
        reply.status().as_u16() >= 200,
        "an answer: {}",
        reply.status()
    );
}
