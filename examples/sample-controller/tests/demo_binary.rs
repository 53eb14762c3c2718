//! `sample-controller --demo` (the README's first command) exits 0 within a time bound,
//! prints every step, and logs no 409 (Conflict or AlreadyExists): the controller reads
//! its own writes (KEP-5647).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn demo_runs_every_step_against_the_embedded_server_and_exits_0() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sample-controller"))
        .arg("--demo")
        .env_remove("KUBECONFIG")
        // Logs on (info), piped: they must come out plain, without ANSI escapes, even
        // without NO_COLOR (colour only on a terminal).
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sample-controller");
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
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
    let log = errors.join().expect("stderr reader");
    assert!(!log.is_empty(), "info logs were written");
    assert!(
        !log.contains('\u{1b}'),
        "ANSI escapes in a piped log:\n{log}"
    );
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
