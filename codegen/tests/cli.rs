//! The `kubegen-codegen` binary: exit codes, `file:line: message` errors, verify diffs.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

mod common;

use common::run;

use std::path::Path;
use std::process::Output;

fn codegen(cmd: &str, cwd: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        cmd,
        "--input-dir",
        "apis",
        "--output-dir",
        "client",
        "--output-module",
        "crate::client",
    ];
    args.extend_from_slice(extra);
    run(&args, cwd)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const OK_MOD: &str = "//! +groupName=example.com\n//! +k8s:deepcopy-gen=package\n\nmod types;\n";

#[test]
fn marker_errors_are_reported_as_file_line_message_for_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    common::write_tree(
        tmp.path(),
        &[
            ("apis/example/v1/mod.rs", OK_MOD),
            (
                "apis/example/v1/types.rs",
                "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
                 \n\
                 /// +genclient\n\
                 /// +genclient:onlyVerbs=get,frob\n\
                 pub struct Foo { pub metadata: ObjectMeta }\n\
                 \n\
                 /// +genclient\n\
                 pub struct FooList { pub items: Vec<Foo> }\n\
                 \n\
                 /// +genclient\n\
                 /// +genclient:method=Scale,verb=watch\n\
                 pub struct Bar { pub spec: String }\n",
            ),
            (
                "apis/other/v1/mod.rs",
                "/// +genclient\npub struct Orphan { pub metadata: () }\n",
            ),
        ],
    );
    let out = codegen("update", tmp.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "apis/example/v1/types.rs:4: unknown verb `frob` in `+genclient:onlyVerbs` (supported verbs: create, update, updateStatus, delete, deleteCollection, get, list, watch, patch, apply, applyStatus)",
            "apis/example/v1/types.rs:7: `FooList` is a list type: +genclient belongs on the item type `Foo`, not on its list",
            "apis/example/v1/types.rs:11: Scale: verb `watch` is not supported by the extension generator",
            "apis/example/v1/types.rs:12: resource `Bar` has no `metadata` field: add `pub metadata: ObjectMeta` (k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)",
            "apis/other/v1/mod.rs:2: missing group for `Orphan`: add `//! +groupName=<group>` to the version module's mod.rs (use an empty value for the core group)",
        ]
    );
    assert!(
        !tmp.path()
            .join("apis/example/v1/zz_generated_deepcopy.rs")
            .exists(),
        "nothing written on error"
    );
}

#[test]
fn syntax_errors_point_at_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    common::write_tree(
        tmp.path(),
        &[
            ("apis/example/v1/mod.rs", OK_MOD),
            (
                "apis/example/v1/types.rs",
                "pub struct A;\n\npub struct B {\n",
            ),
        ],
    );
    let out = codegen("update", tmp.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("apis/example/v1/types.rs:3: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn duplicate_plurals_are_reported_at_the_second_type() {
    let tmp = tempfile::tempdir().unwrap();
    common::write_tree(
        tmp.path(),
        &[(
            "apis/example/v1/mod.rs",
            "//! +groupName=example.com\n\
             use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
             /// +genclient\n\
             pub struct Mouse { pub metadata: ObjectMeta }\n\
             /// +genclient\n\
             /// +resourceName=mouses\n\
             pub struct Mice { pub metadata: ObjectMeta }\n",
        )],
    );
    let out = codegen("update", tmp.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end(),
        "apis/example/v1/mod.rs:7: duplicate plural `mouses`: `Mice` and `Mouse` both map to it; set `+resourceName=` on one of them"
    );
}

#[test]
fn type_markers_in_mod_rs_inner_docs_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    common::write_tree(
        tmp.path(),
        &[(
            "apis/example/v1/mod.rs",
            "//! +groupName=example.com\n//! +genclient:noStatus\n",
        )],
    );
    let out = codegen("update", tmp.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end(),
        "apis/example/v1/mod.rs:2: `+genclient:noStatus` is a type marker: put it on the type, not in mod.rs"
    );
}

#[test]
fn bad_options_are_configuration_errors() {
    let tmp = tempfile::tempdir().unwrap();
    common::write_tree(
        tmp.path(),
        &[
            ("apis/example/v1/mod.rs", OK_MOD),
            ("apis/example/v1/types.rs", ""),
        ],
    );
    let out = codegen("update", tmp.path(), &["--plural-exceptions", "Fish"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end(),
        "invalid configuration: invalid plural exception `Fish`: expected `Kind:Plural`"
    );
    let out = run(
        &[
            "update",
            "--input-dir",
            "apis",
            "--output-dir",
            "c",
            "--output-module",
            "not a path",
        ],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--output-module `not a path` is not a Rust module path"));

    common::write_tree(tmp.path(), &[("header.txt", "// ok\nfn main() {}\n")]);
    let out = codegen("update", tmp.path(), &["--boilerplate", "header.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end(),
        "header.txt:2: boilerplate lines must be `//` comments"
    );

    let out = codegen("update", tmp.path(), &["--boilerplate", "missing.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("missing.txt: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn verify_exits_one_with_a_diff_until_update_runs() {
    let (_tmp, root) = common::scratch_copy();
    let gen_file = root.join("apis/widgets/v1/zz_generated_resource.rs");
    std::fs::remove_file(&gen_file).unwrap();
    let args = [
        "--boilerplate",
        "boilerplate.txt",
        "--with-fake",
        "--with-applyconfig",
        "--plural-exceptions",
        "Cactus:cacti",
    ];
    let out = codegen("verify", &root, &args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.starts_with("--- /dev/null\n+++ b/apis/widgets/v1/zz_generated_resource.rs\n"),
        "{diff}"
    );
    assert!(stderr(&out).contains("1 file(s) out of date"));

    let out = codegen("update", &root, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = codegen("verify", &root, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn without_the_plural_exception_verify_sees_a_different_plural() {
    let (_tmp, root) = common::scratch_copy();
    let out = codegen("verify", &root, &["--boilerplate", "boilerplate.txt"]);
    assert_eq!(out.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("-        ::std::borrow::Cow::Borrowed(\"cacti\")"),
        "{diff}"
    );
    assert!(
        diff.contains("+        ::std::borrow::Cow::Borrowed(\"cactuses\")"),
        "{diff}"
    );
}

/// `kubegen-codegen rbac` (controller-gen's `rbac:roleName=manager-role`): the markers of
/// every `.rs` file under the input directory become one role file; verify exits 1 with
/// a diff until update runs; a malformed marker is `file:line: message`.
#[test]
fn rbac_writes_one_role_file_from_markers_anywhere_in_the_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("controller")).unwrap();
    std::fs::write(
        src.join("main.rs"),
        "//! +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update\n\nfn main() {}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("controller/reconcile.rs"),
        "\
// +kubebuilder:rbac:groups=example.com,resources=widgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=example.com,resources=widgets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
pub fn reconcile() {}
",
    )
    .unwrap();
    let args = [
        "rbac",
        "--input-dir",
        "src",
        "--output",
        "config/rbac/role.yaml",
    ];
    let out = run(&[&args[..], &["--verify"]].concat(), tmp.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("+++ b/config/rbac/role.yaml"),
        "{out:?}"
    );
    let out = run(&args, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let role = std::fs::read_to_string(tmp.path().join("config/rbac/role.yaml")).unwrap();
    assert_eq!(
        role,
        "\
# Code generated by kubegen-codegen rbac. DO NOT EDIT.
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups:
  - \"\"
  resources:
  - events
  verbs:
  - create
  - patch
- apiGroups:
  - apps
  resources:
  - deployments
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - create
  - get
  - update
- apiGroups:
  - example.com
  resources:
  - widgets
  verbs:
  - get
  - list
  - watch
- apiGroups:
  - example.com
  resources:
  - widgets/status
  verbs:
  - get
  - patch
  - update
"
    );
    let out = run(&[&args[..], &["--verify"]].concat(), tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    std::fs::write(
        src.join("controller/bad.rs"),
        "\n/// +kubebuilder:rbac:groups=apps,resources=deployments,verb=get\npub fn x() {}\n",
    )
    .unwrap();
    let out = run(&args, tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "src/controller/bad.rs:2: `+kubebuilder:rbac:groups=apps,resources=deployments,verb=get`: unknown argument `verb`"
        ),
        "{}",
        stderr(&out)
    );
}
