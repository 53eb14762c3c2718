//! Helpers shared by the file-based tests: a copy of the test API tree in a temporary
//! directory, and the configuration hack/update-codegen.sh uses.

#![allow(dead_code, clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kubegen_codegen::Config;

/// The committed test API tree.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// hack/update-codegen.sh's configuration, rooted at `testdata_dir`.
pub fn config(testdata_dir: &Path) -> Config {
    Config::new(
        testdata_dir.join("apis"),
        testdata_dir.join("client"),
        "crate::client",
    )
    .boilerplate(testdata_dir.join("boilerplate.txt"))
    .with_fake(true)
    .with_applyconfig(true)
    .plural_exception("Cactus:cacti")
    .unwrap()
}

/// Copies `from` recursively into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A temporary copy of the test data.
pub fn scratch_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("testdata");
    copy_tree(&testdata(), &root);
    (dir, root)
}

/// Writes `files` (relative path, contents) below `root`.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
}

/// Runs the `kubegen-codegen` binary with `args` in `cwd`.
pub fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubegen-codegen"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}
