//! `kubegen-codegen init` and `create-api` (kubebuilder's `init` and `create api`,
//! <https://book.kubebuilder.io/cronjob-tutorial/cronjob-tutorial>): the refusals in
//! process, and end to end a scaffolded project that builds, passes its own tests and
//! `hack/verify-codegen.sh`, and whose demo (`cargo run --features demo -- --demo`) exits 0, before and
//! after `create-api` and `create-webhook`; its operator binary does not link the test server.
//!
//! The end-to-end test builds the project with this build's target directory (derived
//! from this test binary's path) and this workspace's `Cargo.lock`, so dependencies are
//! the same versions and already compiled. It needs `cargo` (and `rustfmt`): without them
//! it fails, it never skips.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use kubegen_codegen::scaffold::{
    CreateApiOptions, Dependencies, InitOptions, ScaffoldError, create_api, init,
};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("codegen/ has a parent")
        .to_path_buf()
}

/// `<target>` of `<target>/<profile>/deps/scaffold-<hash>`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(3)
        .expect("<target>/<profile>/deps/<test binary>")
        .to_path_buf()
}

fn options(dir: &Path) -> InitOptions {
    InitOptions {
        dir: dir.to_owned(),
        name: "e2e-operator".into(),
        group: "example.com".into(),
        version: "v1alpha1".into(),
        kind: "Widget".into(),
        dependencies: Dependencies::checkout(&repo_root()).expect("this checkout"),
    }
}

/// Every file below `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for path in kubegen_codegen::walk::walk_files(dir).expect("walk") {
        let bytes = fs::read(&path).expect("read");
        out.push((path, bytes));
    }
    out
}

#[test]
fn init_refuses_to_overwrite_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("op");
    // One file the scaffold would write exists (a user's README): nothing is written.
    fs::create_dir_all(dir.join("src")).expect("mkdir");
    fs::write(dir.join("src/main.rs"), "fn main() {}\n").expect("write");
    let before = snapshot(&dir);
    let err = init(&options(&dir)).expect_err("refused");
    let ScaffoldError::WouldOverwrite(paths) = &err else {
        panic!("{err}");
    };
    assert_eq!(paths, &[dir.join("src/main.rs")]);
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert_eq!(snapshot(&dir), before);

    // Into an empty (or absent) directory it writes, and a second init refuses every file.
    let fresh = tmp.path().join("fresh");
    let written = init(&options(&fresh)).expect("init");
    assert!(written.contains(&PathBuf::from("config/crd/example.com_widgets.yaml")));
    assert!(written.contains(&PathBuf::from(
        "src/client/listers/example/v1alpha1/widget.rs"
    )));
    // The controller owns a Deployment: its role may write Deployments, and the kind's
    // spec says what the Deployment runs, with the CRD's defaults.
    let role = fs::read_to_string(fresh.join("config/rbac/role.yaml")).expect("role");
    let apps = "- apiGroups:\n  - apps\n  resources:\n  - deployments\n  verbs:\n  - create\n  - delete\n  - get\n  - list\n  - patch\n  - update\n  - watch\n";
    assert!(role.contains(apps), "{role}");
    assert!(!role.contains("configmaps"), "{role}");
    let crd = fs::read_to_string(fresh.join("config/crd/example.com_widgets.yaml")).expect("crd");
    for default in ["default: 1\n", "default: \"nginx:1.27\"\n"] {
        assert!(
            crd.contains(default),
            "{default} missing from the CRD:\n{crd}"
        );
    }
    let before = snapshot(&fresh);
    let Err(ScaffoldError::WouldOverwrite(paths)) = init(&options(&fresh)) else {
        panic!("second init was not refused");
    };
    assert_eq!(paths.len(), written.len());
    assert_eq!(snapshot(&fresh), before);
}

#[test]
fn create_api_refuses_existing_kinds_and_hand_edited_indexes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("op");
    init(&options(&dir)).expect("init");
    let add = |group: &str, version: &str, kind: &str| {
        create_api(&CreateApiOptions {
            dir: dir.clone(),
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        })
    };
    let before = snapshot(&dir);
    let err = add("example.com", "v1alpha1", "Widget").expect_err("exists");
    assert!(matches!(err, ScaffoldError::KindExists { .. }), "{err}");
    // The same kind in another version would reuse the controller's file: refused.
    let err = add("example.com", "v1", "Widget").expect_err("file exists");
    let ScaffoldError::WouldOverwrite(paths) = &err else {
        panic!("{err}");
    };
    assert!(
        paths.contains(&dir.join("src/controllers/widget.rs")),
        "{paths:?}"
    );
    assert_eq!(snapshot(&dir), before);

    // An index module edited by hand (its marker gone) is not overwritten.
    let index = dir.join("src/controllers/mod.rs");
    let edited = fs::read_to_string(&index)
        .expect("read")
        .replacen("// Code", "// My code", 1);
    fs::write(&index, &edited).expect("write");
    let before = snapshot(&dir);
    let Err(ScaffoldError::WouldOverwrite(paths)) = add("example.com", "v1alpha1", "Gadget") else {
        panic!("hand-edited index was not refused");
    };
    assert_eq!(paths, vec![index]);
    assert_eq!(snapshot(&dir), before);

    // Not a project.
    let err = create_api(&CreateApiOptions {
        dir: tmp.path().to_owned(),
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Gadget".into(),
    })
    .expect_err("not a project");
    assert!(matches!(err, ScaffoldError::NotAProject { .. }), "{err}");
}

#[test]
fn the_scaffold_asks_for_the_workspace_dependency_versions() {
    // The template's registry dependencies must match the versions this workspace builds
    // and tests with (the end-to-end test reuses its Cargo.lock and compiled crates).
    let workspace = fs::read_to_string(repo_root().join("Cargo.toml")).expect("Cargo.toml");
    let template = kubegen_codegen::scaffold::templates::CARGO_TOML.text;
    for dep in [
        "kube-core",
        "k8s-openapi",
        "serde",
        "serde_json",
        "tokio",
        "tokio-util",
        "clap",
        "thiserror",
        "tracing",
        "tracing-subscriber",
    ] {
        let version = |text: &str| {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{dep} = ")))
                .unwrap_or_else(|| panic!("{dep} not in {text}"));
            let rest = line.split_once("= ").expect("=").1;
            let start = rest.find('"').expect("quoted version") + 1;
            let end = start + rest[start..].find('"').expect("closing quote");
            rest[start..end].to_owned()
        };
        assert_eq!(version(template), version(&workspace), "{dep}");
    }
}

/// `program` in `dir` without what cargo set for this test process: ring's build script
/// watches `CARGO_MANIFEST_DIR` (`rerun-if-env-changed`), so inheriting this crate's value
/// would make the inner build and the outer one take turns rebuilding ring and everything
/// above it (rustls, hyper-rustls, kubegen, the test server).
fn command(dir: &Path, program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.current_dir(dir);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_by_cargo = name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_")
            || name.starts_with("NEXTEST")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ]
            .contains(&name.as_ref());
        if set_by_cargo {
            command.env_remove(name.as_ref());
        }
    }
    command
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    let started = Instant::now();
    let output = command(dir, program)
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap_or_else(|e| panic!("running {program} (is it installed?): {e}"));
    eprintln!("{program} {args:?}: {:.1?}", started.elapsed());
    assert!(
        output.status.success(),
        "{program} {args:?} in {} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        dir.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    output
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// What the project's README promises: it builds, is formatted, its tests pass,
/// `hack/verify-codegen.sh` is clean and the demo walks every kind and exits 0.
fn check_project(dir: &Path, kinds: &[&str]) {
    let cargo = cargo();
    run(dir, &cargo, &["build"]);
    // A production build compiles no API server: the test server is a dev-dependency and
    // an optional dependency of the `demo` feature.
    let tree = run(
        dir,
        &cargo,
        &["tree", "--edges", "normal,build", "--prefix", "none"],
    );
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(tree.contains("kubegen v"), "{tree}");
    assert!(!tree.contains("kubegen-testserver"), "{tree}");
    run(dir, &cargo, &["fmt", "--check"]);
    let tests = run(dir, &cargo, &["test"]);
    let log = String::from_utf8_lossy(&tests.stdout);
    for kind in kinds {
        let name = format!("the_{kind}_controller_reconciles_every_step ... ok");
        assert!(log.contains(&name), "{name} missing:\n{log}");
    }
    run(dir, "bash", &["hack/verify-codegen.sh"]);
    let demo = run(dir, &cargo, &["run", "--features", "demo", "--", "--demo"]);
    let stdout = String::from_utf8_lossy(&demo.stdout);
    assert!(stdout.trim_end().ends_with("demo finished"), "{stdout}");
    for kind in kinds {
        assert!(
            stdout.contains(&format!("example-{}", kind.replace('_', "-"))),
            "{stdout}"
        );
    }
}

#[test]
fn init_and_create_api_give_a_project_that_builds_tests_verifies_and_demos() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("op");
    let root = repo_root();
    let codegen = env!("CARGO_BIN_EXE_kubegen-codegen");
    let root_arg = root.to_str().expect("UTF-8 checkout path");
    let dir_arg = dir.to_str().expect("UTF-8 temp path");
    run(
        tmp.path(),
        codegen,
        &[
            "init",
            "--name",
            "e2e-operator",
            "--group",
            "example.com",
            "--version",
            "v1alpha1",
            "--kind",
            "Widget",
            "--dir",
            dir_arg,
            "--kubegen-path",
            root_arg,
        ],
    );
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains("\n[workspace]\n"), "{manifest}");
    fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
    check_project(&dir, &["widget"]);

    // With no cluster configured, the binary says what to do in one line
    // (kubegen::client::ConfigError::Infer), not a debug dump.
    let bare = command(&dir, target_dir().join("debug").join("e2e-operator"))
        .env("HOME", tmp.path())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .output()
        .expect("run e2e-operator");
    let stderr = String::from_utf8_lossy(&bare.stderr);
    assert_eq!(bare.status.code(), Some(1), "{stderr}");
    let line = stderr.lines().last().unwrap_or_default();
    assert!(
        line.starts_with(
            "e2e-operator: no Kubernetes cluster configured: set KUBECONFIG or --kubeconfig"
        ),
        "{stderr}"
    );

    run(
        &dir,
        codegen,
        &[
            "create-api",
            "--group",
            "example.com",
            "--version",
            "v1alpha1",
            "--kind",
            "Gadget",
        ],
    );
    run(
        &dir,
        codegen,
        &[
            "create-api",
            "--group",
            "apps.example.com",
            "--version",
            "v1beta1",
            "--kind",
            "WidgetSet",
        ],
    );
    for crd in [
        "example.com_gadgets.yaml",
        "apps.example.com_widgetsets.yaml",
    ] {
        assert!(dir.join("config/crd").join(crd).is_file(), "{crd}");
    }
    let role = fs::read_to_string(dir.join("config/rbac/role.yaml")).expect("role");
    for resource in ["gadgets/status", "widgetsets/finalizers"] {
        assert!(
            role.contains(resource),
            "{resource} missing from the role:\n{role}"
        );
    }
    // Webhooks for Widget: the runtime's `webhook` feature is turned on in the project's
    // Cargo.toml, and the handlers compile and pass their scaffolded tests.
    run(
        &dir,
        codegen,
        &[
            "create-webhook",
            "--kind",
            "Widget",
            "--defaulting",
            "--validation",
        ],
    );
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
    let kubegen_line = manifest
        .lines()
        .find(|l| l.starts_with("kubegen = "))
        .unwrap_or_default();
    assert!(
        kubegen_line.contains("features = [\"secure-metrics\", \"webhook\"]"),
        "{manifest}"
    );
    assert!(dir.join("config/webhook/manifests.yaml").is_file());
    check_project(&dir, &["widget", "gadget", "widget_set"]);
    let tests = run(&dir, &cargo(), &["test", "webhooks::"]);
    let log = String::from_utf8_lossy(&tests.stdout);
    for name in [
        "the_defaulter_labels_a_widget_and_keeps_a_label_it_has ... ok",
        "the_validator_refuses_names_too_long_for_a_label ... ok",
    ] {
        assert!(log.contains(name), "{name} missing:\n{log}");
    }
    eprintln!("end to end: {:.1?}", started.elapsed());
}
