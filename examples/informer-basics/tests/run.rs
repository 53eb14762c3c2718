//! Runs the example binary against its embedded test server, bounded in time.

use std::{
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

/// Runs the binary, killing it (and failing) after 60 s.
fn run_bounded() -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_informer-basics"))
        .env_remove("KUBECONFIG")
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
fn prints_adds_updates_deletes_and_label_queries_then_exits_0() {
    let out = run_bounded();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    for line in [
        "ADD    default/web-config (initial list)",
        "ADD    default/db-config (initial list)",
        "cache synced: 2 ConfigMaps",
        "ADD    default/web-config-2",
        "UPDATE default/web-config: value 1 -> 2",
        "DELETE default/db-config",
        "done",
    ] {
        assert!(lines.contains(&line), "missing {line:?} in\n{stdout}");
    }
    // the label query, before and after the changes, in that order
    let queries: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("lister: ConfigMaps with app=web"))
        .collect();
    assert_eq!(
        queries,
        [
            &"lister: ConfigMaps with app=web: [web-config]",
            &"lister: ConfigMaps with app=web: [web-config, web-config-2]"
        ]
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("lister: get default/db-config:") && l.contains("not found")),
        "{stdout}"
    );
}
