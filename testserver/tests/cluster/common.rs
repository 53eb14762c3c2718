//! What every test of the cluster in a process shares: a cluster on a paused clock and a
//! poll on that clock.

use std::{future::Future, time::Duration};

use kubegen::client::Client;
use kubegen_testserver::{ClusterConfig, TestServer};

/// A cluster on a paused clock and a client over its in-process front.
pub async fn cluster(config: ClusterConfig) -> (TestServer, Client) {
    // `RUST_LOG=kubegen_testserver=debug` shows what the controllers did.
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .try_init();
    let server = TestServer::builder()
        .cluster(config)
        .paused_clock()
        .start()
        .await
        .unwrap();
    let client = Client::new(server.transport());
    (server, client)
}

/// Polls `check` on the server's (paused) clock until it yields `Some`; virtual time
/// moves while every task waits, so a long timeout costs no wall time.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..6000 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}
