//! What the multi-process tests (`replicas.rs`, `shards.rs`) share: an operator process
//! with its probe and metrics endpoints and its log, a plain HTTP GET, and polling.
#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use parking_lot::Mutex;

/// One operator process, its endpoints, and its stderr lines as they arrive.
pub struct Replica {
    pub identity: String,
    pub child: Child,
    pub probes: String,
    pub metrics: String,
    pub log: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `foo-operator --kubeconfig <kubeconfig> --identity <identity> <args>` with
/// `RUST_LOG=<log>` and waits for its first line (its endpoints).
pub fn start(kubeconfig: &Path, identity: &str, args: &[&str], log: &str) -> Replica {
    let mut child = Command::new(env!("CARGO_BIN_EXE_foo-operator"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--identity", identity])
        .args(args)
        .env("RUST_LOG", log)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start foo-operator");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("first line");
    // "probes at http://A/readyz, metrics at http://B/metrics, identity X"
    let urls: Vec<&str> = line
        .split_whitespace()
        .filter(|w| w.starts_with("http://"))
        .collect();
    assert_eq!(urls.len(), 2, "unexpected first line: {line:?}");
    let probes = urls[0]
        .trim_end_matches(',')
        .trim_end_matches("/readyz")
        .to_owned();
    let metrics = urls[1]
        .trim_end_matches(',')
        .trim_end_matches("/metrics")
        .to_owned();
    let log = Arc::new(Mutex::new(Vec::new()));
    let stderr = child.stderr.take().expect("stderr");
    let sink = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().push((Instant::now(), line));
        }
    });
    Replica {
        identity: identity.to_owned(),
        child,
        probes,
        metrics,
        log,
    }
}

/// A plain HTTP/1.1 GET: (status, body); status 0 when nothing listens.
pub async fn get(base: &str, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = base.trim_start_matches("http://");
    let Ok(mut stream) = tokio::net::TcpStream::connect(host).await else {
        return (0, String::new());
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

/// Polls `check` every 50 ms until it holds; panics after `wait`.
pub async fn until<F: Future<Output = bool>>(
    what: &str,
    wait: Duration,
    mut check: impl FnMut() -> F,
) {
    let deadline = tokio::time::Instant::now() + wait;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
