//! trybuild UI tests: every marker and shape error of `#[derive(kubegen::Resource)]` and
//! `#[derive(DeepCopy)]` is a spanned compile error with a stable message (snapshots in
//! `tests/ui/*.stderr`; bless changes with `TRYBUILD=overwrite`); and a built-in API group
//! whose cargo feature is off is a compile error naming the feature
//! (`tests/ui-features/`: the runtime's trybuild case lives here because trybuild builds
//! every dev-dependency of the crate again, and this crate's are few). One test function,
//! so the dependencies compile once.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.compile_fail("tests/ui-features/*.rs");
}
