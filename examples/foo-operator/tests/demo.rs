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
    let running = operator::start(client.clone(), 2);
    let mut lines = Vec::new();
    let result = demo::run(client, "default", |line| lines.push(line.to_owned())).await;
    let report = running.shutdown().await.expect("stopped");
    result.expect("demo");
    assert_eq!(lines.last().map(String::as_str), Some("demo finished"));
    assert_eq!(report.abandoned_in_flight, 0);
}

#[test]
fn the_binary_demo_exits_0() {
    let output = Command::new(env!("CARGO_BIN_EXE_foo-operator"))
        .arg("--demo")
        .env_remove("KUBECONFIG")
        .output()
        .expect("run foo-operator");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("demo finished"), "{stdout}");
}
