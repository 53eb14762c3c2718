//! `sample-controller --demo` (the README's first command) exits 0 within a time bound
//! and prints every step.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn demo_runs_every_step_against_the_embedded_server_and_exits_0() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sample-controller"))
        .arg("--demo")
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn sample-controller");
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sample-controller --demo did not exit within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read stdout");
    assert!(status.success(), "exit {status:?}; output:\n{out}");
    for line in [
        "controlled by Foo example-foo",
        "scaled Deployment example-foo to 3 replicas",
        "availableReplicas 3",
        "Warning ErrResourceExists",
        "garbage collection removed Deployment example-foo",
        "demo finished",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
}
