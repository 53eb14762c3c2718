//! Listing the files below a directory (the output tree, an API tree for build scripts).

use std::fs;
use std::path::{Path, PathBuf};

use crate::diagnostic::Error;

/// Every regular file below `dir`, recursively, sorted.
pub fn walk_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(|e| Error::io(&d, e))? {
            let path = entry.map_err(|e| Error::io(&d, e))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_nested_files_sorted() {
        let dir = tempfile::tempdir().expect("tempdir");
        for rel in ["b/c.rs", "a.rs", "b/a/d.rs"] {
            let path = dir.path().join(rel);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(&path, "").expect("write");
        }
        let found: Vec<PathBuf> = walk_files(dir.path())
            .expect("walk")
            .into_iter()
            .map(|p| p.strip_prefix(dir.path()).expect("below").to_owned())
            .collect();
        assert_eq!(
            found,
            [
                PathBuf::from("a.rs"),
                PathBuf::from("b/a/d.rs"),
                PathBuf::from("b/c.rs")
            ]
        );
    }

    #[test]
    fn a_missing_directory_is_an_io_error_naming_it() {
        let err = walk_files(Path::new("/nonexistent/kubegen")).unwrap_err();
        assert!(
            err.to_string().starts_with("/nonexistent/kubegen: "),
            "{err}"
        );
    }
}
