//! Errors of the file-based entry points, printed as `file:line: message`.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// One problem in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, or 0 when unknown.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Diagnostic {
    /// Every error inside `err` (a combined [`syn::Error`]) located in `path`.
    pub fn from_syn(path: &Path, err: syn::Error) -> Vec<Diagnostic> {
        err.into_iter()
            .map(|e| Diagnostic {
                path: path.to_owned(),
                line: e.span().start().line,
                message: e.to_string(),
            })
            .collect()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
        }
    }
}

/// Why generating or verifying failed.
#[derive(Debug, Error)]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The API tree has errors (syntax or markers), one per line.
    #[error("{}", DisplayAll(.0))]
    Invalid(Vec<Diagnostic>),
    /// A configuration value is wrong (an option, not a source file).
    #[error("invalid configuration: {0}")]
    Config(String),
}

impl Error {
    /// An I/O error at `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The diagnostics, when the error is about the sources.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Invalid(d) => d,
            _ => &[],
        }
    }
}

struct DisplayAll<'a>(&'a [Diagnostic]);

impl fmt::Display for DisplayAll<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_print_as_file_line_message() {
        let src = "struct A;\n\nstruct B {";
        let err = syn::parse_file(src).unwrap_err();
        let diags = Diagnostic::from_syn(Path::new("apis/x/v1/mod.rs"), err);
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0].to_string().starts_with("apis/x/v1/mod.rs:3: "),
            "{}",
            diags[0]
        );
        let all = Error::Invalid(vec![diags[0].clone(), diags[0].clone()]).to_string();
        assert_eq!(all.lines().count(), 2);
    }
}
