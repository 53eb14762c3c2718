//! Runs the example binary against its embedded test server, bounded in time.

use std::{
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

/// Runs the binary with `args`, killing it (and failing) after 60 s.
fn run_bounded(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_workqueue-example"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "the example did not exit within 60 s\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn demo_processes_every_pod_and_exits_0() {
    let out = run_bounded(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    for line in [
        "Pod default/mypod does not exist anymore",
        "Sync/Add/Update for Pod web-1",
        "Sync/Add/Update for Pod web-2",
        "Dropping pod default/broken out of the queue after 5 retries",
        "Pod default/web-2 does not exist anymore",
    ] {
        assert!(
            // a sync line ends with the projection's phase: `... web-1 (phase Pending)`
            stdout
                .lines()
                .any(|l| l == line || l.starts_with(&format!("{line} (phase "))),
            "missing {line:?} in\n{stdout}"
        );
    }
    assert!(
        stdout.lines().any(|l| l.starts_with(
            "demo: Warning event SyncFailed recorded for pod broken: dropped from the queue after 5 retries"
        )),
        "{stdout}"
    );
    // the failing pod was retried exactly five times before it was dropped
    assert_eq!(
        stderr.matches("Error syncing pod default/broken").count(),
        5,
        "{stderr}"
    );
    // the pod that was never deleted is never reported gone
    assert!(!stdout.contains("Pod default/web-1 does not exist anymore"));
}

#[test]
fn a_demo_that_cannot_finish_in_time_exits_1() {
    let out = run_bounded(&["--timeout", "0"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not finish within 0 s"));
}
