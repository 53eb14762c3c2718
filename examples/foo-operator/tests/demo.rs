//! The operator's demo, in process against the embedded test server, and the binary's
//! `--demo` as the README runs it.

use std::process::Command;

use foo_operator::{CRD_YAML, demo, operator};
use kubegen_testserver::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_walks_through_every_step() {
    let server = TestServer::start().await.expect("server");
    server.load_crd_yaml(CRD_YAML).expect("CRD");
    let client = server.client().expect("client");
    let options = operator::Options {
        workers: 2,
        probe_addr: ([127, 0, 0, 1], 0).into(),
        metrics_addr: ([127, 0, 0, 1], 0).into(),
        identity: "test".into(),
        lease_namespace: "default".into(),
        shards: None,
        election: kubegen::leaderelection::LeaderElectionConfig::default(),
    };
    let manager = operator::manager(client.clone(), &options).expect("manager");
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(manager.run(stop.clone()));
    let mut lines = Vec::new();
    let result = demo::run(client, "default", |line| lines.push(line.to_owned())).await;
    stop.cancel();
    running.await.expect("joined").expect("clean shutdown");
    result.expect("demo");
    assert_eq!(lines.last().map(String::as_str), Some("demo finished"));
}

#[test]
fn the_binary_demo_exits_0() {
    let output = Command::new(env!("CARGO_BIN_EXE_foo-operator"))
        .arg("--demo")
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .output()
        .expect("run foo-operator");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("demo finished"), "{stdout}");
    let log = String::from_utf8_lossy(&output.stderr);
    // A status code is a word of its own: "409" inside a timestamp's microseconds
    // (`19.674096Z`) is not a conflict.
    assert!(
        !log.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| word == "409"),
        "a 409 in the log:\n{log}"
    );
    for conflict in ["Conflict", "AlreadyExists"] {
        assert!(!log.contains(conflict), "{conflict:?} in the log:\n{log}");
    }
}
