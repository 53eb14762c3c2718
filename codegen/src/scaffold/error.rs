//! What can go wrong while scaffolding.

use std::path::PathBuf;

use thiserror::Error;

/// Why `init` or `create-api` wrote nothing (or, for [`ScaffoldError::Generate`] after the
/// checks, stopped).
#[derive(Debug, Error)]
pub enum ScaffoldError {
    /// A name given on the command line is not usable.
    #[error("invalid {what} {value:?}: {reason}")]
    InvalidName {
        /// Which name (`--name`, `--group`, `--version`, `--kind`, `--kubegen-path`).
        what: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Files the command would write exist already; nothing was written.
    #[error(
        "refusing to overwrite {} existing file(s), nothing was written: {}",
        .0.len(),
        list_paths(.0)
    )]
    WouldOverwrite(Vec<PathBuf>),
    /// `create-api` was pointed at a directory `init` did not make.
    #[error("{} is not a project made by `kubegen-codegen init` (no {missing}); pass --dir", .dir.display())]
    NotAProject {
        /// The directory.
        dir: PathBuf,
        /// The file that is missing.
        missing: &'static str,
    },
    /// The kind exists in the project already.
    #[error("kind {kind} already exists in {group}/{version}")]
    KindExists {
        /// The group.
        group: String,
        /// The version.
        version: String,
        /// The kind.
        kind: String,
    },
    /// `create-webhook` without `--defaulting`, `--validation` or `--conversion`.
    #[error("create-webhook needs at least one of --defaulting, --validation and --conversion")]
    NoWebhookKind,
    /// `create-webhook` for a kind the project does not have.
    #[error("no kind {kind} in the project{}; add it with `kubegen-codegen create-api` first", known_kinds(.known))]
    UnknownKind {
        /// The kind asked for (with `--group` / `--version` when given).
        kind: String,
        /// The project's kinds (`Widget (example.com/v1alpha1)`).
        known: Vec<String>,
    },
    /// `create-webhook` for a kind of several versions without `--version`.
    #[error("kind {kind} has several versions ({}): pass --group and --version", .versions.join(", "))]
    AmbiguousKind {
        /// The kind.
        kind: String,
        /// Its `group/version`s.
        versions: Vec<String>,
    },
    /// `--conversion` for a kind that cannot convert (one version, or no hub).
    #[error("--conversion for {kind}: {reason}")]
    Conversion {
        /// The kind.
        kind: String,
        /// Why not.
        reason: String,
    },
    /// A file `create-webhook` must edit does not have the shape it expects.
    #[error("{}: {reason}", .path.display())]
    CannotEdit {
        /// The file.
        path: PathBuf,
        /// What was expected.
        reason: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The generators refused the project's API types.
    #[error(transparent)]
    Generate(#[from] crate::Error),
}

/// The first few paths, then how many more.
fn list_paths(paths: &[PathBuf]) -> String {
    const SHOWN: usize = 5;
    let mut text: Vec<String> = paths
        .iter()
        .take(SHOWN)
        .map(|p| p.display().to_string())
        .collect();
    if paths.len() > SHOWN {
        text.push(format!("and {} more", paths.len() - SHOWN));
    }
    text.join(", ")
}

/// ` (it has: A, B)` or ` (it has none)`.
fn known_kinds(known: &[String]) -> String {
    if known.is_empty() {
        " (it has none)".to_owned()
    } else {
        format!(" (it has: {})", known.join(", "))
    }
}

impl ScaffoldError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
