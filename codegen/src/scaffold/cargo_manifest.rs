//! Edits to a scaffolded project's `Cargo.toml`, made with `toml_edit` so the user's
//! comments, order and layout stay as they were.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Value};

use super::ScaffoldError;
use super::layout::File;

/// The project's `Cargo.toml` with `feature` in its `kubegen` dependency's `features`, or
/// `None` when it is already there. The dependency may be a version string, an inline
/// table or a `[dependencies.kubegen]` table; a project without one cannot be edited.
pub fn with_kubegen_feature(dir: &Path, feature: &str) -> Result<Option<File>, ScaffoldError> {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| ScaffoldError::io(&path, e))?;
    let cannot = |reason: String| ScaffoldError::CannotEdit {
        path: path.clone(),
        reason,
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| cannot(format!("not valid TOML: {}", e.message())))?;
    let missing = || {
        cannot(format!(
            "no `kubegen` in [dependencies]: add `kubegen = {{ version = \"...\", features = [\"{feature}\"] }}` yourself and run create-webhook again"
        ))
    };
    let dep = doc
        .get_mut("dependencies")
        .and_then(|d| d.as_table_like_mut())
        .and_then(|d| d.get_mut("kubegen"))
        .ok_or_else(missing)?;
    // `kubegen = "0.1"` becomes `kubegen = { version = "0.1" }` first.
    if let Some(version) = dep.as_str().map(str::to_owned) {
        let mut table = InlineTable::new();
        table.insert("version", Value::from(version));
        *dep = Item::Value(Value::InlineTable(table));
    }
    let table = dep.as_table_like_mut().ok_or_else(|| {
        cannot("the `kubegen` dependency is neither a version nor a table".into())
    })?;
    let features = match table.get_mut("features") {
        Some(item) => item.as_array_mut().ok_or_else(|| {
            cannot("the `kubegen` dependency's `features` is not an array".into())
        })?,
        None => {
            table.insert("features", Item::Value(Value::Array(Array::new())));
            table
                .get_mut("features")
                .and_then(Item::as_array_mut)
                .ok_or_else(|| cannot("cannot add `features`".into()))?
        }
    };
    if features.iter().any(|f| f.as_str() == Some(feature)) {
        return Ok(None);
    }
    features.push(feature);
    // An inline table is one line: lay it out again rather than leave `false , features`.
    if let Some(inline) = dep.as_inline_table_mut() {
        inline.fmt();
    }
    Ok(Some(File {
        path: PathBuf::from("Cargo.toml"),
        text: doc.to_string(),
        executable: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(manifest: &str) -> Result<Option<String>, ScaffoldError> {
        let dir = tempfile::tempdir().map_err(|e| ScaffoldError::io(Path::new("."), e))?;
        std::fs::write(dir.path().join("Cargo.toml"), manifest)
            .map_err(|e| ScaffoldError::io(dir.path(), e))?;
        Ok(with_kubegen_feature(dir.path(), "webhook")?.map(|f| f.text))
    }

    #[test]
    fn the_feature_is_added_to_each_spelling_of_the_dependency_once() {
        let cases = [
            (
                "[dependencies]\n# ours\nkubegen = { path = \"../runtime\", default-features = false }\n",
                "[dependencies]\n# ours\nkubegen = { path = \"../runtime\", default-features = false, features = [\"webhook\"] }\n",
            ),
            (
                "[dependencies]\nkubegen = { version = \"0.1\", features = [\"apps\"] }\n",
                "[dependencies]\nkubegen = { version = \"0.1\", features = [\"apps\", \"webhook\"] }\n",
            ),
            (
                "[dependencies]\nkubegen = \"0.1\"\n",
                "[dependencies]\nkubegen = { version = \"0.1\", features = [\"webhook\"] }\n",
            ),
            (
                "[dependencies.kubegen]\nversion = \"0.1\"\n",
                "[dependencies.kubegen]\nversion = \"0.1\"\nfeatures = [\"webhook\"]\n",
            ),
        ];
        for (before, after) in cases {
            let edited = edit(before).ok().flatten();
            assert_eq!(edited.as_deref(), Some(after), "{before}");
            assert_eq!(edit(after).ok(), Some(None), "already there: {after}");
        }
    }

    #[test]
    fn a_manifest_without_kubegen_or_not_toml_is_refused() {
        for bad in ["[dependencies]\nserde = \"1\"\n", "[dependencies\n"] {
            assert!(
                matches!(edit(bad), Err(ScaffoldError::CannotEdit { .. })),
                "{bad}"
            );
        }
    }
}
