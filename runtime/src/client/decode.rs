//! Incremental decoding of newline-delimited JSON, as the API server streams watch events,
//! and of `application/cbor-seq` watch streams ([`decode_cbor_events`]).
//!
//! The body of a watch arrives in arbitrary chunks: one event may be split across several
//! chunks and one chunk may hold many events. [`LineDecoder`] buffers bytes and hands out
//! complete lines; [`decode_lines`] turns a chunk stream into a stream of decoded items in
//! which a malformed line becomes one error item and decoding goes on with the next line.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt, stream::BoxStream};
use kube_core::WatchEvent;
use serde::de::DeserializeOwned;

use super::{cbor::CborSeqDecoder, error::Error, strip::Strip, transport::TransportError};

/// Splits a byte stream into lines (without the `\n`; a trailing `\r` is dropped too).
///
/// Lines that lie whole inside one chunk are handed out as slices of that chunk (no copy);
/// only a line split across chunks is assembled in the buffer.
#[derive(Debug, Default)]
pub struct LineDecoder {
    buf: BytesMut,
}

/// `line` without a trailing `\r`, unless it is blank.
fn line_of(mut line: Bytes) -> Option<Bytes> {
    if line.last() == Some(&b'\r') {
        line.truncate(line.len() - 1);
    }
    (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
}

impl LineDecoder {
    /// A decoder with an empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a chunk and returns the lines it completed, blank lines skipped.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Bytes> {
        let mut lines = Vec::new();
        self.push_bytes(Bytes::copy_from_slice(chunk), &mut lines);
        lines
    }

    /// Appends a chunk and adds the lines it completed to `lines`, blank lines skipped.
    /// Lines whole inside `chunk` share its memory.
    pub fn push_bytes(&mut self, mut chunk: Bytes, lines: &mut impl Extend<Bytes>) {
        let Some(first) = memchr::memchr(b'\n', &chunk) else {
            self.buf.extend_from_slice(&chunk);
            return;
        };
        // The end of a line begun in an earlier chunk.
        let head = chunk.split_to(first + 1);
        let line = if self.buf.is_empty() {
            head.slice(..first)
        } else {
            self.buf.extend_from_slice(&head[..first]);
            self.buf.split().freeze()
        };
        lines.extend(line_of(line));
        // Whole lines, then the start of the next one.
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', &chunk) {
            lines.extend(line_of(chunk.slice(start..end)));
            start = end + 1;
        }
        self.buf.extend_from_slice(&chunk[start..]);
    }

    /// Ends the input: whatever is left (a last line without `\n`), if not blank.
    pub fn finish(&mut self) -> Option<Bytes> {
        let rest = self.buf.split().freeze();
        (!rest.iter().all(u8::is_ascii_whitespace)).then_some(rest)
    }

    /// Bytes held while waiting for the end of a line.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

struct State<S> {
    chunks: S,
    decoder: LineDecoder,
    ready: VecDeque<Bytes>,
    done: bool,
}

/// Decodes every line of `chunks` as a `T`.
///
/// A line that is not a valid `T` yields `Err(Error::Decode)` and the stream goes on; a
/// transport error yields `Err(Error::Transport)` and ends the stream.
pub fn decode_lines<T, S>(chunks: S) -> BoxStream<'static, Result<T, Error>>
where
    T: DeserializeOwned + Send + 'static,
    S: Stream<Item = Result<Bytes, TransportError>> + Send + Unpin + 'static,
{
    decode_lines_with(chunks, |line| serde_json::from_slice::<T>(line))
}

/// Decodes every line of `chunks` as a watch event whose object is decoded through `strip`
/// (as [`decode_lines`] does for `Strip::NONE`).
pub(crate) fn decode_events<T, S>(
    chunks: S,
    strip: Strip,
) -> BoxStream<'static, Result<WatchEvent<T>, Error>>
where
    T: DeserializeOwned + Send + 'static,
    S: Stream<Item = Result<Bytes, TransportError>> + Send + Unpin + 'static,
{
    decode_lines_with(chunks, move |line| strip.event_from_slice(line))
}

/// Decodes every line of `chunks` with `decode`, as [`decode_lines`] describes.
fn decode_lines_with<T, S, F>(chunks: S, decode: F) -> BoxStream<'static, Result<T, Error>>
where
    T: Send + 'static,
    S: Stream<Item = Result<Bytes, TransportError>> + Send + Unpin + 'static,
    F: Fn(&[u8]) -> serde_json::Result<T> + Send + 'static,
{
    let state = State {
        chunks,
        decoder: LineDecoder::new(),
        ready: VecDeque::new(),
        done: false,
    };
    futures::stream::unfold((state, decode), |(mut st, decode)| async move {
        loop {
            if let Some(line) = st.ready.pop_front() {
                let item = decode(&line).map_err(|e| {
                    tracing::debug!(error = %e, len = line.len(), "malformed watch line");
                    Error::Decode(e)
                });
                return Some((item, (st, decode)));
            }
            if st.done {
                return None;
            }
            match st.chunks.next().await {
                Some(Ok(chunk)) => st.decoder.push_bytes(chunk, &mut st.ready),
                Some(Err(e)) => {
                    st.done = true;
                    st.ready.clear();
                    return Some((Err(Error::Transport(e)), (st, decode)));
                }
                None => {
                    st.done = true;
                    st.ready.extend(st.decoder.finish());
                }
            }
        }
    })
    .boxed()
}

/// Decodes every data item of an `application/cbor-seq` watch body as a watch event whose
/// object is decoded through `strip`. An item that is not a valid event yields
/// `Err(Error::DecodeCbor)` and the stream goes on; bytes that are not a CBOR data item (a
/// sequence has no delimiter to resynchronise on) and transport errors end it.
pub(crate) fn decode_cbor_events<T, S>(
    chunks: S,
    strip: Strip,
) -> BoxStream<'static, Result<WatchEvent<T>, Error>>
where
    T: DeserializeOwned + Send + 'static,
    S: Stream<Item = Result<Bytes, TransportError>> + Send + Unpin + 'static,
{
    struct CborState<S> {
        chunks: S,
        decoder: CborSeqDecoder,
        ready: VecDeque<Bytes>,
        done: bool,
    }
    let state = CborState {
        chunks,
        decoder: CborSeqDecoder::new(),
        ready: VecDeque::new(),
        done: false,
    };
    futures::stream::unfold(state, move |mut st| async move {
        loop {
            if let Some(item) = st.ready.pop_front() {
                let event = strip.event_from_cbor::<T>(&item).map_err(|e| {
                    tracing::debug!(error = %e, len = item.len(), "malformed CBOR watch event");
                    Error::DecodeCbor(e)
                });
                return Some((event, st));
            }
            if st.done {
                return None;
            }
            let split = match st.chunks.next().await {
                Some(Ok(chunk)) => st.decoder.push_bytes(chunk, &mut st.ready),
                Some(Err(e)) => {
                    st.done = true;
                    st.ready.clear();
                    return Some((Err(Error::Transport(e)), st));
                }
                None => {
                    st.done = true;
                    st.decoder.finish()
                }
            };
            if let Err(e) = split {
                st.done = true;
                st.ready.clear();
                return Some((Err(Error::DecodeCbor(e)), st));
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    fn events(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            let ev = serde_json::json!({
                "type": "ADDED",
                "object": {"metadata": {"name": format!("obj-{i}"), "resourceVersion": i.to_string()}}
            });
            out.extend(serde_json::to_vec(&ev).unwrap());
            out.push(b'\n');
        }
        out
    }

    async fn decode_chunks(chunks: Vec<Vec<u8>>) -> Vec<Result<WatchEvent<Value>, Error>> {
        let s = futures::stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from(c))));
        decode_lines::<WatchEvent<Value>, _>(s).collect().await
    }

    fn names(items: &[Result<WatchEvent<Value>, Error>]) -> Vec<String> {
        items
            .iter()
            .map(|r| match r {
                Ok(WatchEvent::Added(v)) => v["metadata"]["name"].as_str().unwrap().to_string(),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[tokio::test]
    async fn events_split_at_every_byte_offset_decode_identically() {
        let body = events(3);
        for cut in 0..=body.len() {
            let chunks = vec![body[..cut].to_vec(), body[cut..].to_vec()];
            let out = decode_chunks(chunks).await;
            assert_eq!(names(&out), ["obj-0", "obj-1", "obj-2"], "cut at {cut}");
        }
    }

    #[tokio::test]
    async fn one_byte_chunks_decode() {
        let body = events(4);
        let out = decode_chunks(body.iter().map(|b| vec![*b]).collect()).await;
        assert_eq!(names(&out).len(), 4);
    }

    #[tokio::test]
    async fn many_events_in_one_chunk_all_come_out_in_order() {
        let out = decode_chunks(vec![events(100)]).await;
        let got = names(&out);
        assert_eq!(got.len(), 100);
        assert_eq!(got[99], "obj-99");
    }

    #[tokio::test]
    async fn malformed_line_yields_an_error_and_the_stream_continues() {
        let mut body = events(1);
        body.extend_from_slice(b"{not json\n");
        body.extend(events(2));
        let out = decode_chunks(vec![body]).await;
        assert_eq!(out.len(), 4);
        assert!(out[0].is_ok());
        assert!(matches!(out[1], Err(Error::Decode(_))));
        assert!(out[2].is_ok() && out[3].is_ok());
    }

    #[tokio::test]
    async fn error_event_carries_the_status() {
        let body = br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}
"#;
        let out = decode_chunks(vec![body.to_vec()]).await;
        match &out[0] {
            Ok(WatchEvent::Error(s)) => {
                assert_eq!(s.code, 410);
                assert_eq!(s.reason, "Expired");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn last_line_without_newline_is_decoded() {
        let mut body = events(2);
        body.pop();
        assert_eq!(names(&decode_chunks(vec![body]).await).len(), 2);
    }

    #[tokio::test]
    async fn broken_body_ends_the_stream_with_a_transport_error() {
        let mut chunks = vec![Ok(Bytes::from(events(1)))];
        chunks.push(Err(TransportError::Body("reset".into())));
        chunks.push(Ok(Bytes::from(events(1))));
        let out: Vec<_> = decode_lines::<WatchEvent<Value>, _>(futures::stream::iter(chunks))
            .collect()
            .await;
        assert_eq!(out.len(), 2);
        assert!(matches!(out[1], Err(Error::Transport(_))));
    }

    #[test]
    fn crlf_and_blank_lines_are_handled() {
        let mut d = LineDecoder::new();
        let lines = d.push(b"a\r\n\n  \nb\n");
        assert_eq!(
            lines,
            vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")]
        );
        assert_eq!(d.buffered(), 0);
    }

    proptest! {
        #[test]
        fn any_chunking_yields_the_same_lines(
            lines in proptest::collection::vec("[a-z{}\":0-9]{1,20}", 0..20),
            cuts in proptest::collection::vec(0usize..400, 0..10),
        ) {
            let mut body = Vec::new();
            for l in &lines { body.extend_from_slice(l.as_bytes()); body.push(b'\n'); }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(body.len())).collect();
            cuts.sort_unstable();
            let mut d = LineDecoder::new();
            let mut got = Vec::new();
            let mut prev = 0;
            for c in cuts.into_iter().chain(std::iter::once(body.len())) {
                got.extend(d.push(&body[prev..c]));
                prev = c;
            }
            got.extend(d.finish());
            let got: Vec<String> = got.iter().map(|b| String::from_utf8(b.to_vec()).unwrap()).collect();
            prop_assert_eq!(got, lines);
        }
    }
}
