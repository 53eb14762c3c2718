//! Webhooks in the code generator (issue 40, part 3): `+kubebuilder:webhook` markers →
//! `config/webhook/manifests.yaml` (`kubegen-codegen webhook`, with `--verify`),
//! `+kubebuilder:webhook:conversion` → a multi-version CRD's `conversion: Webhook`, and
//! `kubegen-codegen create-webhook`.
//!
//! Golden files: `testdata/webhook/config/` (what `webhook` and `crd` write for
//! `testdata/webhook/src`) and `testdata/webhook/scaffold/` (what `create-webhook` writes;
//! `KUBEGEN_BLESS=1` rewrites them). The scaffolded handlers use `kubegen::webhook`, which
//! lands in the runtime in parallel: they are checked as text here, not compiled.

#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{copy_tree, run};
use kubegen_codegen::PluralExceptions;
use kubegen_codegen::scaffold::{Dependencies, InitOptions, init};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/webhook")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `want` is the golden file `name` (rewritten with `KUBEGEN_BLESS=1`).
fn golden(name: &str, got: &str) {
    let path = root().join("scaffold").join(name);
    if std::env::var_os("KUBEGEN_BLESS").is_some() {
        fs::write(&path, got).unwrap();
    }
    let want = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == got,
        "{} differs (KUBEGEN_BLESS=1 rewrites it):\n{}",
        path.display(),
        similar_diff(&want, got)
    );
}

fn similar_diff(want: &str, got: &str) -> String {
    let mut out = String::new();
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            out.push_str(&format!("line {}:\n- {w}\n+ {g}\n", i + 1));
        }
    }
    out.push_str(&format!(
        "({} lines want, {} lines got)",
        want.lines().count(),
        got.lines().count()
    ));
    out
}

#[test]
fn committed_webhook_manifests_match_fresh_generation() {
    let output = root().join("config/webhook/manifests.yaml");
    let outcome = kubegen_codegen::webhook::files::verify(&root().join("src"), &output).unwrap();
    assert!(outcome.is_up_to_date(), "{}", outcome.diff);
    let text = fs::read_to_string(&output).unwrap();
    // controller-gen's names and order: the mutating configuration first, webhooks by name.
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  name: "))
        .collect();
    assert_eq!(
        names,
        [
            "mutating-webhook-configuration",
            "mpod.hooks.example.com",
            "mship-v2.kb.io",
            "validating-webhook-configuration",
            "vship-v1.kb.io",
            "vship-v2.kb.io"
        ]
    );
    assert!(text.contains(
        "  clientConfig:\n    service:\n      name: webhook-service\n      namespace: system\n      path: /validate-ships-kubegen-dev-v2-ship\n"
    ));
}

#[test]
fn a_conversion_marker_gives_the_multi_version_crd_a_conversion_webhook() {
    let crds = root().join("config/crd");
    let outcome = kubegen_codegen::crd::files::verify(
        &root().join("src/apis"),
        &crds,
        &PluralExceptions::default(),
    )
    .unwrap();
    assert!(outcome.is_up_to_date(), "{}", outcome.diff);
    let text = fs::read_to_string(crds.join("ships.kubegen.dev_ships.yaml")).unwrap();
    assert!(
        text.contains(
            "spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service:\n          name: webhook-service\n          namespace: system\n          path: /convert\n      conversionReviewVersions:\n      - v1\n  group: ships.kubegen.dev\n"
        ),
        "{text}"
    );

    // On a kind of one version there is nothing to convert: an error at the type.
    let tmp = tempfile::tempdir().unwrap();
    let apis = tmp.path().join("apis");
    copy_tree(&root().join("src/apis/ships/v2"), &apis.join("ships/v2"));
    let err = kubegen_codegen::crd::files::generate(&apis, &PluralExceptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "{}:17: ships.kubegen.dev_ships.yaml: `+kubebuilder:webhook:conversion` on a kind with one version",
            apis.join("ships/v2/mod.rs").display()
        )),
        "{err}"
    );
}

/// The `webhook` subcommand: verify exits 1 with a diff until update writes the file,
/// then 0; a malformed marker is `file:line: message` (exit 2), wherever it sits.
#[test]
fn the_webhook_command_writes_verifies_and_reports_bad_markers() {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&root().join("src"), &tmp.path().join("src"));
    let args = [
        "webhook",
        "--input-dir",
        "src",
        "--output",
        "config/webhook/manifests.yaml",
    ];
    let verify = [&args[..], &["--verify"]].concat();
    let out = run(&verify, tmp.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("+++ b/config/webhook/manifests.yaml"),
        "{out:?}"
    );
    let out = run(&args, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(tmp.path().join("config/webhook/manifests.yaml")).unwrap(),
        fs::read_to_string(root().join("config/webhook/manifests.yaml")).unwrap()
    );
    assert_eq!(run(&verify, tmp.path()).status.code(), Some(0));

    fs::write(
        tmp.path().join("src/webhooks/bad.rs"),
        "pub struct S {\n    /// +kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,sideEffects=Some,groups=g.io,resources=xs,verbs=create,versions=v1,name=vx.g.io,admissionReviewVersions=v1\n    pub x: i32,\n}\n// +kubebuilder:webhook:path=/v,mutating=maybe\n",
    )
    .unwrap();
    let out = run(&args, tmp.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("src/webhooks/bad.rs:2: `+kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,sideEffects=Some,")
            && err.contains("`sideEffects=Some`: expected None or NoneOnDryRun"),
        "{err}"
    );
    assert!(
        err.contains("src/webhooks/bad.rs:5: `+kubebuilder:webhook:path=/v,mutating=maybe`: `mutating=maybe`: expected true or false"),
        "{err}"
    );

    // Two webhooks of one name in one configuration: at the second.
    fs::write(
        tmp.path().join("src/webhooks/bad.rs"),
        "// +kubebuilder:webhook:path=/v,mutating=false,failurePolicy=fail,sideEffects=None,groups=g.io,resources=xs,verbs=create,versions=v1,name=vship-v1.kb.io,admissionReviewVersions=v1\n",
    )
    .unwrap();
    let err = stderr(&run(&args, tmp.path()));
    assert!(
        err.contains("src/webhooks/ship.rs:")
            && err.contains("two webhooks named `vship-v1.kb.io`"),
        "{err}"
    );
}

/// A project `init` made, with its Widget kind.
fn project(tmp: &Path) -> PathBuf {
    let dir = tmp.join("op");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    init(&InitOptions {
        dir: dir.clone(),
        name: "hook-operator".into(),
        group: "example.com".into(),
        version: "v1alpha1".into(),
        kind: "Widget".into(),
        dependencies: Dependencies::checkout(repo).unwrap(),
    })
    .unwrap();
    dir
}

/// Every file below `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    kubegen_codegen::walk::walk_files(dir)
        .unwrap()
        .into_iter()
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn create_webhook_refuses_bad_input_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let before = snapshot(&dir);
    let cases: [(&[&str], &str); 4] = [
        (
            &["--kind", "Widget"],
            "create-webhook needs at least one of --defaulting, --validation and --conversion",
        ),
        (
            &["--kind", "Gizmo", "--validation"],
            "no kind Gizmo in the project (it has: Widget (example.com/v1alpha1)); add it with `kubegen-codegen create-api` first",
        ),
        (
            &["--kind", "Widget", "--version", "v2", "--defaulting"],
            "no kind Widget of version v2 in the project",
        ),
        (
            &["--kind", "Widget", "--conversion"],
            "--conversion for Widget: Widget has one version (v1alpha1)",
        ),
    ];
    for (args, message) in cases {
        let out = run(&[&["create-webhook"][..], args].concat(), &dir);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    let out = run(
        &["create-webhook", "--kind", "Widget", "--validation"],
        tmp.path(),
    );
    assert!(
        stderr(&out).contains("is not a project made by `kubegen-codegen init`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&dir), before);
}

/// `create-webhook --defaulting --validation`: the handler file under its markers, its
/// test, the index, `mod webhooks;` in main.rs, and the manifests, which verify; a second
/// run refuses to overwrite.
#[test]
fn create_webhook_scaffolds_handlers_markers_test_and_manifests() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let out = run(
        &[
            "create-webhook",
            "--kind",
            "Widget",
            "--defaulting",
            "--validation",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = String::from_utf8_lossy(&out.stdout).into_owned();
    for file in [
        "src/webhooks/widget.rs",
        "src/webhooks/widget_test.rs",
        "src/webhooks/mod.rs",
        "src/main.rs",
    ] {
        assert!(written.contains(&format!("wrote {file}\n")), "{written}");
    }
    let read = |rel: &str| fs::read_to_string(dir.join(rel)).unwrap();
    golden("widget.rs", &read("src/webhooks/widget.rs"));
    golden("widget_test.rs", &read("src/webhooks/widget_test.rs"));
    golden("mod.rs", &read("src/webhooks/mod.rs"));
    golden("manifests.yaml", &read("config/webhook/manifests.yaml"));
    assert!(read("src/main.rs").contains("\nmod manager;\nmod webhooks;\n"));
    // The project's own update script knows the manifests, and they are current.
    assert!(
        read("hack/update-codegen.sh")
            .contains("codegen webhook --input-dir src --output config/webhook/manifests.yaml")
    );
    let verify = run(
        &[
            "webhook",
            "--input-dir",
            "src",
            "--output",
            "config/webhook/manifests.yaml",
            "--verify",
        ],
        &dir,
    );
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));

    let before = snapshot(&dir);
    let out = run(
        &["create-webhook", "--kind", "Widget", "--validation"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("refusing to overwrite"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&dir), before);
}

/// `create-webhook --conversion` on a kind with a second version (written by hand, as
/// create-api adds kinds, not versions): the hub gets the marker, the spoke its
/// conversion file, the CRD its conversion webhook.
#[test]
fn create_webhook_conversion_marks_the_hub_and_scaffolds_the_spokes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let v1alpha1 = dir.join("src/apis/example/v1alpha1");
    let v1 = dir.join("src/apis/example/v1");
    fs::create_dir_all(&v1).unwrap();
    let types = fs::read_to_string(v1alpha1.join("widget.rs")).unwrap();
    fs::write(
        v1.join("widget.rs"),
        types.replace(
            "/// +genclient\n",
            "/// +genclient\n/// +kubebuilder:storageversion\n",
        ),
    )
    .unwrap();
    fs::write(
        v1.join("mod.rs"),
        fs::read_to_string(v1alpha1.join("mod.rs"))
            .unwrap()
            .replace("v1alpha1", "v1"),
    )
    .unwrap();
    let out = run(
        &["create-webhook", "--kind", "Widget", "--conversion"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read = |rel: &str| fs::read_to_string(dir.join(rel)).unwrap();
    assert!(
        read("src/apis/example/v1/widget.rs")
            .contains("/// +kubebuilder:storageversion\n/// +kubebuilder:webhook:conversion\n")
    );
    golden(
        "widget_conversion.rs",
        &read("src/apis/example/v1alpha1/widget_conversion.rs"),
    );
    let index = read("src/apis/example/v1alpha1/mod.rs");
    assert!(index.contains("mod widget_conversion;\n"), "{index}");
    assert!(!index.contains("pub use widget_conversion"), "{index}");
    let crd = read("config/crd/example.com_widgets.yaml");
    assert!(
        crd.contains("  conversion:\n    strategy: Webhook\n"),
        "{crd}"
    );
    // No admission webhook was asked for.
    assert!(!dir.join("config/webhook/manifests.yaml").exists());
    assert!(!dir.join("src/webhooks").exists());
}
