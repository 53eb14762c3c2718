//! Reading CRD manifests (`apiextensions.k8s.io/v1`, YAML with one or more documents, or
//! JSON) into the served versions to import. Anything malformed is an [`ImportError`]
//! naming the file, the document and the field.

use std::path::Path;

use serde_json::{Map, Value};

use super::ImportError;

/// One served version of one CRD: what the generated types and their markers need.
#[derive(Clone, Debug, PartialEq)]
pub struct CrdVersion {
    /// `metadata.name` (`<plural>.<group>`).
    pub crd_name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// `spec.names.singular`, when given.
    pub singular: Option<String>,
    /// `spec.names.shortNames`.
    pub short_names: Vec<String>,
    /// `spec.names.categories`.
    pub categories: Vec<String>,
    /// `spec.scope == Namespaced`.
    pub namespaced: bool,
    /// The version's name.
    pub version: String,
    /// `storage: true`.
    pub storage: bool,
    /// How many versions of the CRD are served.
    pub served_versions: usize,
    /// `deprecated: true`, with `deprecationWarning` when set.
    pub deprecated: Option<Option<String>>,
    /// `schema.openAPIV3Schema`.
    pub schema: Map<String, Value>,
    /// `subresources.status` is set.
    pub status_subresource: bool,
    /// `subresources.scale`.
    pub scale: Option<Map<String, Value>>,
    /// `additionalPrinterColumns`.
    pub printer_columns: Vec<Map<String, Value>>,
    /// `selectableFields[].jsonPath`.
    pub selectable_fields: Vec<String>,
}

fn invalid(path: &Path, doc: usize, message: impl Into<String>) -> ImportError {
    ImportError::Invalid {
        path: path.to_owned(),
        document: doc,
        message: message.into(),
    }
}

fn str_at<'a>(v: &'a Value, ptr: &str, path: &Path, doc: usize) -> Result<&'a str, ImportError> {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            invalid(
                path,
                doc,
                format!("`{}` is missing or not a string", ptr_name(ptr)),
            )
        })
}

/// `/spec/names/kind` → `spec.names.kind`.
fn ptr_name(ptr: &str) -> String {
    ptr.trim_start_matches('/').replace('/', ".")
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `s` can name a Rust module (a version directory): not a keyword either.
fn is_module_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && super::names::snake(s) == s
}

/// The served versions of every CRD in `text` (the contents of `path`).
pub fn parse(path: &Path, text: &str) -> Result<Vec<CrdVersion>, ImportError> {
    let docs: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![v],
        Err(_) => serde_saphyr::from_multiple::<Value>(text)
            .map_err(|e| ImportError::Yaml {
                path: path.to_owned(),
                message: e.to_string(),
            })?
            .into_iter()
            .filter(|d| !d.is_null())
            .collect(),
    };
    if docs.is_empty() {
        return Err(invalid(path, 1, "no CustomResourceDefinition in the file"));
    }
    let mut out = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        out.extend(parse_document(path, i + 1, doc)?);
    }
    Ok(out)
}

fn parse_document(path: &Path, n: usize, doc: &Value) -> Result<Vec<CrdVersion>, ImportError> {
    let api_version = doc.get("apiVersion").and_then(Value::as_str);
    let kind = doc.get("kind").and_then(Value::as_str);
    if api_version != Some("apiextensions.k8s.io/v1") || kind != Some("CustomResourceDefinition") {
        return Err(invalid(
            path,
            n,
            format!(
                "not an apiextensions.k8s.io/v1 CustomResourceDefinition (apiVersion {}, kind {})",
                api_version.unwrap_or("missing"),
                kind.unwrap_or("missing")
            ),
        ));
    }
    let group = str_at(doc, "/spec/group", path, n)?.to_owned();
    let kind = str_at(doc, "/spec/names/kind", path, n)?.to_owned();
    let plural = str_at(doc, "/spec/names/plural", path, n)?.to_owned();
    if !kind.starts_with(|c: char| c.is_ascii_uppercase())
        || !kind.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(invalid(
            path,
            n,
            format!(
                "`spec.names.kind` `{kind}` is not a Kubernetes kind (an upper-case letter, then letters and digits)"
            ),
        ));
    }
    let crd_name = doc
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{plural}.{group}"), str::to_owned);
    let namespaced = match str_at(doc, "/spec/scope", path, n)? {
        "Namespaced" => true,
        "Cluster" => false,
        other => {
            return Err(invalid(
                path,
                n,
                format!("`spec.scope` is `{other}`, not Namespaced or Cluster"),
            ));
        }
    };
    let names = doc.pointer("/spec/names");
    let singular = names
        .and_then(|v| v.get("singular"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let short_names = strings(names.and_then(|v| v.get("shortNames")));
    let categories = strings(names.and_then(|v| v.get("categories")));
    let Some(versions) = doc.pointer("/spec/versions").and_then(Value::as_array) else {
        return Err(invalid(path, n, "`spec.versions` is missing or not a list"));
    };
    let served_versions = versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .count();
    let mut out = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let at = |field: &str| format!("spec.versions[{i}].{field}");
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(path, n, format!("`{}` is missing", at("name"))))?;
        if !is_module_name(name) {
            return Err(invalid(
                path,
                n,
                format!(
                    "`{}` `{name}` cannot name a Rust module (lower-case letters and digits)",
                    at("name")
                ),
            ));
        }
        if v.get("served").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let Some(Value::Object(schema)) = v.pointer("/schema/openAPIV3Schema") else {
            return Err(invalid(
                path,
                n,
                format!(
                    "`{}` is missing: a version without a schema has no types to import",
                    at("schema.openAPIV3Schema")
                ),
            ));
        };
        let deprecated = (v.get("deprecated").and_then(Value::as_bool) == Some(true)).then(|| {
            v.get("deprecationWarning")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        let objects = |key: &str| -> Vec<Map<String, Value>> {
            v.get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|c| c.as_object().cloned()).collect())
                .unwrap_or_default()
        };
        out.push(CrdVersion {
            crd_name: crd_name.clone(),
            group: group.clone(),
            kind: kind.clone(),
            plural: plural.clone(),
            singular: singular.clone(),
            short_names: short_names.clone(),
            categories: categories.clone(),
            namespaced,
            version: name.to_owned(),
            storage: v.get("storage").and_then(Value::as_bool) == Some(true),
            served_versions,
            deprecated,
            schema: schema.clone(),
            status_subresource: v.pointer("/subresources/status").is_some(),
            scale: v
                .pointer("/subresources/scale")
                .and_then(Value::as_object)
                .cloned(),
            printer_columns: objects("additionalPrinterColumns"),
            selectable_fields: objects("selectableFields")
                .iter()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str).map(str::to_owned))
                .collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_input_is_an_error_naming_file_document_and_field() {
        let p = Path::new("x.yaml");
        let err = parse(p, "a: [").unwrap_err().to_string();
        assert!(err.starts_with("x.yaml: "), "{err}");
        let err = parse(p, "apiVersion: v1\nkind: ConfigMap\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("document 1") && err.contains("ConfigMap"),
            "{err}"
        );
        let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: a.io\n  scope: Namespaced\n  names: {kind: A, plural: as}\n  versions:\n  - {name: v1, served: true, storage: true}\n";
        let err = parse(p, crd).unwrap_err().to_string();
        assert!(
            err.contains("spec.versions[0].schema.openAPIV3Schema"),
            "{err}"
        );
        let err = parse(p, &crd.replace("kind: A,", "kind: a-b,"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("spec.names.kind"), "{err}");
        let err = parse(p, &crd.replace("name: v1,", "name: type,"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`spec.versions[0].name` `type` cannot name a Rust module"),
            "{err}"
        );
    }

    #[test]
    fn only_served_versions_are_read() {
        let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: as.a.io}\nspec:\n  group: a.io\n  scope: Cluster\n  names: {kind: A, plural: as}\n  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}, subresources: {status: {}}}\n  - {name: v1beta1, served: false, storage: false}\n";
        let vs = parse(Path::new("a.yaml"), crd).unwrap();
        assert_eq!(vs.len(), 1);
        assert_eq!(vs[0].version, "v1");
        assert!(!vs[0].namespaced && vs[0].status_subresource && vs[0].storage);
    }
}
