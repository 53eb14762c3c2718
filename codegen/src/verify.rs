//! `verify`: regenerate in memory and compare with the tree, as
//! code-generator's verify-codegen.sh does; stale, missing and extra generated files all
//! count, and the differences come back as a unified diff. The comparison itself is
//! [`crate::OutputTree::verify`], shared by every generator; this holds its outcome,
//! [`VerifyOutcome`]; the `verify` command's entry point is
//! [`Generator::verify`](crate::Generator::verify).

use std::path::PathBuf;

use similar::TextDiff;

/// The result of a verification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyOutcome {
    /// Files whose committed state differs from a fresh generation (stale, missing or
    /// extra), as paths under their root directory.
    pub differing: Vec<PathBuf>,
    /// A unified diff from the tree (`a/`) to the fresh output (`b/`).
    pub diff: String,
}

impl VerifyOutcome {
    /// Whether the tree matches a fresh generation.
    pub fn is_up_to_date(&self) -> bool {
        self.differing.is_empty()
    }

    /// Records that `path` differs: `old` is what the tree holds (`None`: missing), `new`
    /// what generation gives (`None`: extra); the unified diff from one to the other is
    /// appended, with `/dev/null` for the absent side.
    pub fn record(&mut self, path: PathBuf, old: Option<&str>, new: Option<&str>) {
        let side = |prefix: &str, text: Option<&str>| {
            text.map_or("/dev/null".to_owned(), |_| {
                format!("{prefix}/{}", path.display())
            })
        };
        let (a, b) = (side("a", old), side("b", new));
        let diff = TextDiff::from_lines(old.unwrap_or_default(), new.unwrap_or_default());
        self.diff.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&a, &b)
                .to_string(),
        );
        if !self.diff.ends_with('\n') {
            self.diff.push('\n');
        }
        self.differing.push(path);
    }
}
