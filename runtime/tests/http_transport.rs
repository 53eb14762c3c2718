//! The production transport on the wire: URL resolution, default headers, gzip decoded as
//! the chunks arrive, the read, request and connect timeouts, HTTP/2 over TLS, and proxies
//! (absolute-form requests and `CONNECT` tunnels), against raw TCP servers written here and
//! the test server.
#![allow(clippy::unwrap_used)] // test helpers may unwrap, like the tests

mod client_support;

use std::{
    future::Future,
    io::Write as _,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use base64::Engine as _;
use bytes::Bytes;
use client_support::*;
use futures::StreamExt as _;
use kubegen::client::{
    Body, Config, ConfigError, HttpTransport, RequestTimeout, Transport, TransportError,
};
use kubegen_testserver::TestServer;
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{TcpListener, TcpStream},
};

/// Every test fails instead of hanging.
const LIMIT: Duration = Duration::from_secs(20);

async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("test timed out")
}

fn get(uri: &str) -> http::Request<Vec<u8>> {
    http::Request::get(uri).body(Vec::new()).unwrap()
}

fn url(addr: SocketAddr, rest: &str) -> http::Uri {
    format!("http://{addr}{rest}").parse().unwrap()
}

/// Reads a request head (the requests here have no body) and returns it as text.
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap() == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// A raw HTTP/1.1 server: records each request head and hands the connection to `answer`.
async fn raw_server<F, Fut>(answer: F) -> (SocketAddr, Arc<Mutex<Vec<String>>>)
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            let answer = answer.clone();
            tokio::spawn(async move {
                let head = read_head(&mut stream).await;
                seen.lock().unwrap().push(head);
                answer(stream).await;
            });
        }
    });
    (addr, heads)
}

fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

const CHUNKED_GZIP_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
    content-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n";

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

async fn collect(body: Body) -> Result<Vec<u8>, TransportError> {
    body.collect().await.map(|b| b.to_vec())
}

// ---------- URLs and headers ----------

#[tokio::test]
async fn paths_keep_the_cluster_url_prefix_and_absolute_uris_pass_through() {
    let (addr, heads) = raw_server(|mut s| async move {
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            .await
            .unwrap();
    })
    .await;
    for base in ["/prefix", "/prefix/"] {
        let t = HttpTransport::new(&Config::new(url(addr, base))).unwrap();
        let resp = within(t.send(get("/api/v1/pods?limit=5"))).await.unwrap();
        assert_eq!(collect(resp.into_body()).await.unwrap(), b"ok");
        let t = HttpTransport::new(&Config::new(url(addr, base))).unwrap();
        let absolute = format!("http://{addr}/elsewhere");
        within(t.send(get(&absolute))).await.unwrap();
    }
    let heads = heads.lock().unwrap();
    let lines: Vec<_> = heads.iter().map(|h| h.lines().next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "GET /prefix/api/v1/pods?limit=5 HTTP/1.1",
            "GET /elsewhere HTTP/1.1",
            "GET /prefix/api/v1/pods?limit=5 HTTP/1.1",
            "GET /elsewhere HTTP/1.1",
        ]
    );
}

#[tokio::test]
async fn user_agent_and_accept_encoding_are_defaults_a_request_may_override() {
    let (addr, heads) = raw_server(|mut s| async move {
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
    })
    .await;
    let config = Config::new(url(addr, "")).with_user_agent("op/1.0");
    let t = HttpTransport::new(&config).unwrap();
    within(t.send(get("/a"))).await.unwrap();
    let mut own = get("/b");
    own.headers_mut()
        .insert("user-agent", "mine/2".parse().unwrap());
    own.headers_mut()
        .insert("accept-encoding", "identity".parse().unwrap());
    within(t.send(own)).await.unwrap();
    let mut config = config;
    config.disable_compression = true;
    let t = HttpTransport::new(&config).unwrap();
    within(t.send(get("/c"))).await.unwrap();

    let heads = heads.lock().unwrap();
    assert_eq!(header(&heads[0], "user-agent"), Some("op/1.0"));
    assert_eq!(header(&heads[0], "accept-encoding"), Some("gzip"));
    assert_eq!(header(&heads[1], "user-agent"), Some("mine/2"));
    assert_eq!(header(&heads[1], "accept-encoding"), Some("identity"));
    assert_eq!(header(&heads[2], "accept-encoding"), None);
}

#[tokio::test]
async fn a_redirect_is_returned_not_followed() {
    let (addr, heads) = raw_server(|mut s| async move {
        s.write_all(b"HTTP/1.1 302 Found\r\nlocation: /elsewhere\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
    })
    .await;
    let t = HttpTransport::new(&Config::new(url(addr, ""))).unwrap();
    let resp = within(t.send(get("/a"))).await.unwrap();
    assert_eq!(resp.status(), 302);
    assert_eq!(heads.lock().unwrap().len(), 1);
}

// ---------- gzip ----------

#[tokio::test]
async fn gzip_is_decoded_chunk_by_chunk_as_the_body_arrives() {
    let (decoded_first, first_decoded) = tokio::sync::oneshot::channel::<()>();
    let first_decoded = Arc::new(Mutex::new(Some(first_decoded)));
    let (addr, _) = raw_server(move |mut s| {
        let first_decoded = first_decoded.lock().unwrap().take();
        async move {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            s.write_all(CHUNKED_GZIP_HEAD).await.unwrap();
            // the gzip header alone, split across two chunks
            enc.flush().unwrap();
            let header = std::mem::take(enc.get_mut());
            s.write_all(&chunk(&header[..5])).await.unwrap();
            s.write_all(&chunk(&header[5..])).await.unwrap();
            // then the first event, split across two chunks
            enc.write_all(b"{\"type\":\"ADDED\"}\n").unwrap();
            enc.flush().unwrap();
            let first = std::mem::take(enc.get_mut());
            let (a, b) = first.split_at(first.len() / 2);
            s.write_all(&chunk(a)).await.unwrap();
            s.write_all(&chunk(b)).await.unwrap();
            // a watch: the rest comes only once the client has decoded the first event
            if let Some(first_decoded) = first_decoded {
                first_decoded.await.unwrap();
            }
            enc.write_all(b"{\"type\":\"DELETED\"}\n").unwrap();
            let rest = enc.finish().unwrap();
            s.write_all(&chunk(&rest)).await.unwrap();
            s.write_all(b"0\r\n\r\n").await.unwrap();
        }
    })
    .await;
    let t = HttpTransport::new(&Config::new(url(addr, ""))).unwrap();
    let resp = within(t.send(get("/watch"))).await.unwrap();
    assert!(resp.headers().get("content-encoding").is_none());
    assert!(resp.headers().get("content-length").is_none());
    assert_eq!(
        resp.headers().get("content-type").unwrap(),
        "application/json"
    );
    let mut body = resp.into_body().into_stream();
    let mut decoded = Vec::new();
    while !decoded.ends_with(b"\n") {
        let chunk = within(body.next()).await.unwrap().unwrap();
        assert!(!chunk.is_empty(), "no empty chunks");
        decoded.extend_from_slice(&chunk);
    }
    assert_eq!(decoded, b"{\"type\":\"ADDED\"}\n");
    decoded_first.send(()).unwrap();
    let rest: Vec<Bytes> = within(body.map(Result::unwrap).collect::<Vec<_>>()).await;
    assert_eq!(rest.concat(), b"{\"type\":\"DELETED\"}\n");
}

#[tokio::test]
async fn a_gzip_body_cut_short_is_a_body_error() {
    let (addr, _) = raw_server(|mut s| async move {
        let whole = gzip(&[b'x'; 4096]);
        s.write_all(CHUNKED_GZIP_HEAD).await.unwrap();
        // the server ends the body before the deflate stream and the gzip trailer
        s.write_all(&chunk(&whole[..whole.len() - 6]))
            .await
            .unwrap();
        s.write_all(b"0\r\n\r\n").await.unwrap();
    })
    .await;
    let t = HttpTransport::new(&Config::new(url(addr, ""))).unwrap();
    let resp = within(t.send(get("/x"))).await.unwrap();
    let err = within(collect(resp.into_body())).await.unwrap_err();
    assert!(matches!(err, TransportError::Body(_)), "{err}");
    assert!(err.to_string().contains("gzip"), "{err}");
}

#[tokio::test]
async fn corrupt_gzip_is_a_body_error() {
    let (addr, _) = raw_server(|mut s| async move {
        s.write_all(CHUNKED_GZIP_HEAD).await.unwrap();
        s.write_all(&chunk(b"this is not gzip at all"))
            .await
            .unwrap();
        s.write_all(b"0\r\n\r\n").await.unwrap();
    })
    .await;
    let t = HttpTransport::new(&Config::new(url(addr, ""))).unwrap();
    let resp = within(t.send(get("/x"))).await.unwrap();
    let err = within(collect(resp.into_body())).await.unwrap_err();
    assert!(matches!(err, TransportError::Body(_)), "{err}");
}

#[tokio::test]
async fn an_empty_body_marked_gzip_is_empty() {
    let (addr, _) = raw_server(|mut s| async move {
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
    })
    .await;
    let t = HttpTransport::new(&Config::new(url(addr, ""))).unwrap();
    let resp = within(t.send(get("/x"))).await.unwrap();
    assert!(within(collect(resp.into_body())).await.unwrap().is_empty());
}

#[tokio::test]
async fn without_compression_a_gzip_body_is_passed_through() {
    let whole = gzip(b"{}");
    let sent = whole.clone();
    let (addr, _) = raw_server(move |mut s| {
        let sent = sent.clone();
        async move {
            s.write_all(CHUNKED_GZIP_HEAD).await.unwrap();
            s.write_all(&chunk(&sent)).await.unwrap();
            s.write_all(b"0\r\n\r\n").await.unwrap();
        }
    })
    .await;
    let mut config = Config::new(url(addr, ""));
    config.disable_compression = true;
    let t = HttpTransport::new(&config).unwrap();
    let resp = within(t.send(get("/x"))).await.unwrap();
    assert_eq!(resp.headers().get("content-encoding").unwrap(), "gzip");
    assert_eq!(within(collect(resp.into_body())).await.unwrap(), whole);
}

// ---------- timeouts and connection failures ----------

#[tokio::test]
async fn a_stalled_body_runs_into_the_read_timeout() {
    let (addr, _) = raw_server(|mut s| async move {
        s.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        // chunks come faster than the read timeout for a while, then stop
        for _ in 0..5 {
            s.write_all(&chunk(b"{}\n")).await.unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(LIMIT).await;
    })
    .await;
    let config = Config::new(url(addr, "")).with_timeouts(None, Some(Duration::from_millis(400)));
    let t = HttpTransport::new(&config).unwrap();
    let resp = within(t.send(get("/watch"))).await.unwrap();
    let mut body = resp.into_body();
    let mut chunks = 0;
    let err = loop {
        match within(body.next()).await.unwrap() {
            Ok(_) => chunks += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(chunks, 5, "each chunk resets the read timeout");
    assert!(matches!(err, TransportError::Timeout(_)), "{err}");
    assert!(
        within(body.next()).await.is_none(),
        "the body ends after the error"
    );
}

#[tokio::test]
async fn a_missing_response_head_runs_into_the_read_timeout() {
    let (addr, _) = raw_server(|s| async move {
        // keeps the connection open, silent
        let _open = s;
        tokio::time::sleep(LIMIT).await;
    })
    .await;
    let config = Config::new(url(addr, "")).with_timeouts(None, Some(Duration::from_millis(300)));
    let t = HttpTransport::new(&config).unwrap();
    let err = within(t.send(get("/x"))).await.unwrap_err();
    assert!(matches!(err, TransportError::Timeout(_)), "{err}");
}

#[tokio::test]
async fn the_request_timeout_bounds_head_and_body_together() {
    let (addr, _) = raw_server(|mut s| async move {
        s.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        // a chunk every 100 ms never trips the read timeout, only the total one
        for _ in 0..100 {
            if s.write_all(&chunk(b"x")).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let config = Config::new(url(addr, "")).with_timeouts(None, Some(Duration::from_secs(5)));
    let t = HttpTransport::new(&config).unwrap();
    let mut req = get("/list");
    req.extensions_mut()
        .insert(RequestTimeout(Duration::from_millis(600)));
    let started = std::time::Instant::now();
    let resp = within(t.send(req)).await.unwrap();
    let err = within(collect(resp.into_body())).await.unwrap_err();
    assert!(matches!(err, TransportError::Timeout(_)), "{err}");
    assert!(err.to_string().contains("request timed out"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let t = HttpTransport::new(&Config::new(url(addr, ""))).unwrap();
    let err = within(t.send(get("/x"))).await.unwrap_err();
    assert!(matches!(err, TransportError::Connect(_)), "{err}");
    // the message carries the cause, not only "client error (Connect)"
    assert!(err.to_string().to_lowercase().contains("refused"), "{err}");
}

#[tokio::test]
async fn a_tls_handshake_that_never_ends_runs_into_the_connect_timeout() {
    // accepts TCP, never answers the ClientHello
    let (addr, _) = raw_server(|s| async move {
        // keeps the connection open, silent
        let _open = s;
        tokio::time::sleep(LIMIT).await;
    })
    .await;
    let uri = format!("https://{addr}").parse().unwrap();
    let config = Config::new(uri).with_timeouts(Some(Duration::from_millis(300)), None);
    let t = HttpTransport::new(&config).unwrap();
    let started = std::time::Instant::now();
    let err = within(t.send(get("/x"))).await.unwrap_err();
    assert!(matches!(err, TransportError::Connect(_)), "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

// ---------- HTTP/2 over TLS ----------

#[tokio::test]
async fn http2_is_negotiated_over_tls_and_http1_is_used_over_plain_http() {
    let tls = TestServer::builder().tls(true).start().await.unwrap();
    let t = HttpTransport::new(&tls.config().unwrap()).unwrap();
    let resp = within(t.send(get("/api/v1/namespaces"))).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.version(), http::Version::HTTP_2);
    let list: serde_json::Value =
        serde_json::from_slice(&within(collect(resp.into_body())).await.unwrap()).unwrap();
    assert_eq!(list["kind"], "NamespaceList");

    let plain = TestServer::start().await.unwrap();
    let t = HttpTransport::new(&plain.config().unwrap()).unwrap();
    let resp = within(t.send(get("/api/v1/namespaces"))).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.version(), http::Version::HTTP_11);
}

// ---------- proxies ----------

/// An HTTP `CONNECT` proxy: records each request head, opens the tunnel and splices.
async fn connect_proxy() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            tokio::spawn(async move {
                let head = read_head(&mut client).await;
                seen.lock().unwrap().push(head.clone());
                let mut first = head.lines().next().unwrap_or_default().split(' ');
                let (Some("CONNECT"), Some(target)) = (first.next(), first.next()) else {
                    let _ = client
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                        .await;
                    return;
                };
                let Ok(mut upstream) = TcpStream::connect(target).await else {
                    let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                    return;
                };
                client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .unwrap();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (addr, heads)
}

#[tokio::test]
async fn https_goes_through_a_connect_tunnel_with_the_proxy_credentials() {
    let server = TestServer::builder().tls(true).start().await.unwrap();
    let (proxy, heads) = connect_proxy().await;
    let config = server
        .config()
        .unwrap()
        .with_proxy(format!("http://user:p%40ss@{proxy}").parse().unwrap());
    let t = HttpTransport::new(&config).unwrap();
    assert!(
        !format!("{t:?}").contains("p%40ss"),
        "no proxy password in Debug output: {t:?}"
    );
    let resp = within(t.send(get("/api/v1/namespaces"))).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.version(),
        http::Version::HTTP_2,
        "ALPN inside the tunnel"
    );
    within(collect(resp.into_body())).await.unwrap();
    // HTTP/2 multiplexes these over the one tunnel
    let requests = (0..8).map(|_| {
        let t = t.clone();
        async move {
            let resp = t.send(get("/api/v1/namespaces/default")).await.unwrap();
            assert_eq!(resp.status(), 200);
            collect(resp.into_body()).await.unwrap();
        }
    });
    within(futures::future::join_all(requests)).await;

    let heads = heads.lock().unwrap();
    assert_eq!(heads.len(), 1, "one tunnel: {heads:?}");
    let target = server.addr();
    assert!(
        heads[0].starts_with(&format!("CONNECT {target} HTTP/1.1\r\n")),
        "{}",
        heads[0]
    );
    let expected = base64::engine::general_purpose::STANDARD.encode("user:p@ss");
    assert_eq!(
        header(&heads[0], "proxy-authorization"),
        Some(format!("Basic {expected}").as_str())
    );
}

#[tokio::test]
async fn plain_http_is_sent_to_the_proxy_in_absolute_form() {
    let fx = Fixture::start(Script::new(vec![Reply::json(200, serde_json::json!({}))])).await;
    let config = Config::new("http://kube.example.invalid:6443/prefix".parse().unwrap())
        .with_proxy(format!("http://me:secret@{}", fx.addr).parse().unwrap());
    let t = HttpTransport::new(&config).unwrap();
    let resp = within(t.send(get("/api/v1/namespaces"))).await.unwrap();
    assert_eq!(resp.status(), 200);
    let r = &fx.script.requests()[0];
    assert_eq!(
        r.uri,
        "http://kube.example.invalid:6443/prefix/api/v1/namespaces"
    );
    let expected = base64::engine::general_purpose::STANDARD.encode("me:secret");
    assert_eq!(
        r.header("proxy-authorization"),
        Some(format!("Basic {expected}"))
    );
}

#[tokio::test]
async fn a_proxy_that_refuses_the_tunnel_is_a_connect_error() {
    let server = TestServer::builder().tls(true).start().await.unwrap();
    let (proxy, _) = raw_server(|mut s| async move {
        s.write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
    })
    .await;
    let config = server
        .config()
        .unwrap()
        .with_proxy(format!("http://{proxy}").parse().unwrap());
    let t = HttpTransport::new(&config).unwrap();
    let err = within(t.send(get("/api/v1/namespaces"))).await.unwrap_err();
    assert!(matches!(err, TransportError::Connect(_)), "{err}");
    assert!(err.to_string().contains("proxy authorization"), "{err}");
}

#[test]
fn only_http_proxies_are_accepted() {
    for proxy in ["socks5://127.0.0.1:1080", "https://proxy.example:3128"] {
        let config = Config::new("https://10.0.0.1:6443".parse().unwrap())
            .with_proxy(proxy.parse().unwrap());
        let err = HttpTransport::new(&config).unwrap_err();
        assert!(matches!(err, ConfigError::Url(_)), "{proxy}: {err}");
        assert!(err.to_string().contains("only http://"), "{err}");
    }
}
