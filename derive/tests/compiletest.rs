//! trybuild UI tests: every marker and shape error of `#[derive(kubegen::Resource)]` and
//! `#[derive(DeepCopy)]` is a spanned compile error with a stable message (snapshots in
//! `tests/ui/*.stderr`; bless changes with `TRYBUILD=overwrite`). One test function, so
//! the dependencies compile once.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
