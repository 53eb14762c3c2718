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

impl ScaffoldError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
