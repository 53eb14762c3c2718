//! `verify`: regenerate in memory and compare with the tree, as
//! code-generator's verify-codegen.sh does; stale, missing and extra generated files all
//! count, and the differences come back as a unified diff.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::diagnostic::Error;
use crate::generate::{Generator, Root};

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

    /// Compares `path` on disk with `new`, what generation gives for it (`None`: nothing,
    /// the file should not exist), recording a difference.
    pub fn compare_file(&mut self, path: &Path, new: Option<&str>) {
        let old = fs::read_to_string(path).ok();
        if old.as_deref() != new {
            self.record(path.to_owned(), old.as_deref(), new);
        }
    }
}

/// Brings the one generated file `path` up to date with `text`: written when it differs
/// (its directory made), removed when generation gives nothing; returns whether it exists
/// afterwards. The `update` side of [`VerifyOutcome::compare_file`].
pub fn write_or_remove(path: &Path, text: Option<&str>) -> Result<bool, Error> {
    let Some(text) = text else {
        if path.exists() {
            fs::remove_file(path).map_err(|e| Error::io(path, e))?;
        }
        return Ok(false);
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    if fs::read_to_string(path).ok().as_deref() != Some(text) {
        fs::write(path, text).map_err(|e| Error::io(path, e))?;
    }
    Ok(true)
}

fn read(path: &Path) -> Result<String, Error> {
    fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

impl Generator {
    /// Regenerates (in memory) and diffs it against the tree.
    pub fn verify(&self) -> Result<VerifyOutcome, Error> {
        verify(self)
    }
}

/// Regenerates `generator`'s output in memory and diffs it against what is on disk.
pub fn verify(generator: &Generator) -> Result<VerifyOutcome, Error> {
    let files = generator.generate()?;
    // (root, path) -> (the file on disk, the fresh contents)
    type Pair<'a> = (Option<PathBuf>, Option<&'a str>);
    let mut pairs: BTreeMap<(Root, PathBuf), Pair<'_>> = BTreeMap::new();
    for f in &files {
        pairs.entry((f.root, f.path.clone())).or_default().1 = Some(f.contents.as_str());
    }
    for (root, rel) in generator.existing_files()? {
        let current = generator.root_dir(root).join(&rel);
        pairs.entry((root, rel)).or_default().0 = Some(current);
    }

    let mut outcome = VerifyOutcome::default();
    for ((root, rel), (current, fresh)) in pairs {
        let old = current
            .as_deref()
            .map(read)
            .transpose()?
            .unwrap_or_default();
        if current.is_some() && fresh.is_some_and(|new| new == old) {
            continue;
        }
        let shown = generator.root_dir(root).join(&rel);
        outcome.record(shown, current.is_some().then_some(old.as_str()), fresh);
    }
    Ok(outcome)
}
