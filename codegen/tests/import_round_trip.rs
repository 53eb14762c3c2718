//! CRD → types → CRD (kubegen issue 21, item 5): `kubegen-codegen import-crd` writes
//! types that `kubegen-codegen crd` turns back into the same schema.
//!
//! * The real CRDs (`testdata/crds/`): original → imported types → CRD.
//! * The examples' types (`testdata/apis`, the CRD test tree, the sample controller's
//!   Foo): types → CRD → imported types → CRD, the two CRDs compared.
//!
//! Compared after one documented normalisation ([`normalise`]), each step for a reason
//! the generators cannot remove:
//!
//! 1. Descriptions are compared as words (whitespace runs collapsed, the ```` ```text ````
//!    fences and marker escapes of `import::docs` removed): a doc comment cannot keep a
//!    description's line breaks and blank lines (`crd::schema::description` joins a
//!    paragraph's lines with spaces), and Markdown-hazardous text is fenced so rustdoc
//!    leaves it alone.
//! 2. A description only the regenerated schema has is dropped: it is the k8s-openapi
//!    type's own (`Time`'s), which a field without a description shows through.
//! 3. `oneOf` / `anyOf` / `allOf` / `not` are dropped: no controller-gen marker carries
//!    them (controller-gen writes them from Go-only validation), so imported types
//!    cannot; import-crd reports each one it leaves out (checked below). The
//!    `anyOf: [{type: integer}, {type: string}]` controller-gen writes beside
//!    `x-kubernetes-int-or-string` says what the extension says.
//! 4. `required` lists are sets (kube-apiserver does not read their order).
//! 5. The root's `apiVersion`, `kind` and `metadata` are what the CRD generator writes
//!    for every resource (`{type: string}`, `{type: object}`): kube-apiserver validates
//!    them itself.
//! 6. `type: integer` without a `format` reads as `format: int64`: controller-gen writes
//!    Go's `int` without one, and every Rust integer type has one in a generated schema
//!    (`i64`, which import-crd chooses, holds any such value).
//!
//! Names, scope, versions (served, storage, deprecation), subresources, printer columns
//! and selectable fields are compared as they are.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kubegen_codegen::Boilerplate;
use kubegen_codegen::PluralExceptions;
use kubegen_codegen::crd::files;
use kubegen_codegen::import::{self, ImportOptions};
use kubegen_testserver::TestServer;
use serde_json::{Map, Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Imports `crds` into a temporary tree and generates its CRDs again (by file name);
/// also returns import-crd's notes.
fn reimport(crds: &[PathBuf]) -> (BTreeMap<String, Value>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let apis = dir.path().join("apis");
    let imported = import::tree::update(&ImportOptions {
        crds: crds.to_vec(),
        output_dir: apis.clone(),
        output_module: "crate::apis".into(),
        boilerplate: Boilerplate::default(),
    })
    .unwrap();
    let crds = files::manifests(&apis, &PluralExceptions::default())
        .unwrap_or_else(|e| panic!("the imported types do not generate CRDs:\n{e}"));
    (crds.into_iter().collect(), imported.notes)
}

fn description_words(d: &str) -> String {
    d.split_whitespace()
        .filter(|w| {
            // Fence lines (```text, ````) and nothing else made only of backticks.
            let w = w.strip_suffix("text").unwrap_or(w);
            !(w.len() >= 3 && w.chars().all(|c| c == '`'))
        })
        .map(|w| {
            w.strip_prefix("\\+")
                .map_or(w.to_owned(), |r| format!("+{r}"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The normalisation of the module docs, applied to `original` with `regenerated` beside
/// it (for step 2).
fn normalise(original: &Value, regenerated: &Value) -> (Value, Value) {
    match (original, regenerated) {
        (Value::Object(o), Value::Object(r)) => {
            let mut o2 = Map::new();
            let mut r2 = Map::new();
            for (k, v) in o {
                if matches!(k.as_str(), "oneOf" | "anyOf" | "allOf" | "not") {
                    continue; // step 3
                }
                let rv = r.get(k).unwrap_or(&Value::Null);
                // (A printer column's `type: integer` has no format in either.)
                if k == "type"
                    && v == "integer"
                    && !o.contains_key("format")
                    && !o.contains_key("jsonPath")
                {
                    o2.insert("format".into(), json!("int64")); // step 6
                }
                let (a, b) = match k.as_str() {
                    "description" => (
                        json!(v.as_str().map(description_words)),
                        json!(rv.as_str().map(description_words)),
                    ),
                    "required" => (sorted(v), sorted(rv)),
                    // Property maps and other objects: recurse.
                    _ => normalise(v, rv),
                };
                o2.insert(k.clone(), a);
                if r.contains_key(k) {
                    r2.insert(k.clone(), b);
                }
            }
            for (k, v) in r {
                if o.contains_key(k) {
                    continue;
                }
                if k == "description" {
                    continue; // step 2
                }
                r2.insert(k.clone(), v.clone());
            }
            (Value::Object(o2), Value::Object(r2))
        }
        (Value::Array(o), Value::Array(r)) if o.len() == r.len() => {
            let (a, b): (Vec<Value>, Vec<Value>) =
                o.iter().zip(r).map(|(x, y)| normalise(x, y)).unzip();
            (Value::Array(a), Value::Array(b))
        }
        _ => (original.clone(), regenerated.clone()),
    }
}

fn sorted(v: &Value) -> Value {
    let mut items: Vec<Value> = v.as_array().cloned().unwrap_or_default();
    items.sort_by_key(ToString::to_string);
    Value::Array(items)
}

/// What of a CRD the round trip keeps: names, scope, and per version its flags,
/// subresources, columns, selectable fields and schema (root's apiVersion, kind and
/// metadata as the generator writes them, step 5).
fn essentials(crd: &Value) -> Value {
    let spec = &crd["spec"];
    let versions: Vec<Value> = spec["versions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["served"] == json!(true))
        .map(|v| {
            let mut schema = v["schema"]["openAPIV3Schema"].clone();
            if let Some(Value::Object(props)) = schema.get_mut("properties") {
                props.insert("apiVersion".into(), json!({"type": "string"}));
                props.insert("kind".into(), json!({"type": "string"}));
                props.insert("metadata".into(), json!({"type": "object"}));
            }
            json!({
                "name": v["name"],
                "served": v["served"],
                "storage": v["storage"],
                "deprecated": v["deprecated"],
                "deprecationWarning": v["deprecationWarning"],
                "subresources": v["subresources"],
                "additionalPrinterColumns": v["additionalPrinterColumns"],
                "selectableFields": v["selectableFields"],
                "schema": schema,
            })
        })
        .collect();
    json!({
        "group": spec["group"],
        "names": spec["names"],
        "scope": spec["scope"],
        "versions": versions,
    })
}

/// The paths where `a` and `b` differ (for a readable failure).
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                differences(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{path}.{k}"),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} ≠ {b}")),
        _ => {}
    }
}

fn assert_same_schema(name: &str, original: &Value, regenerated: &Value) {
    let (a, b) = normalise(&essentials(original), &essentials(regenerated));
    let mut diffs = Vec::new();
    differences(&a, &b, "", &mut diffs);
    assert!(
        diffs.is_empty(),
        "{name}: {} difference(s):\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

fn read_crd(path: &Path) -> Value {
    serde_saphyr::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// kube-apiserver's structural-schema rules, as the test server enforces them
/// (`testserver/src/schema/structural.rs`), accept a regenerated CRD.
fn assert_server_accepts(server: &TestServer, name: &str, crd: &Value) {
    if let Err(e) = server.load_crd_yaml(&serde_json::to_string(crd).unwrap()) {
        panic!("{name}: the test server rejects the regenerated CRD: {e}");
    }
}

#[tokio::test]
async fn real_crds_come_back_from_their_imported_types() {
    let server = TestServer::start().await.unwrap();
    let dir = repo().join("codegen/testdata/crds");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 4, "{paths:?}");
    let (regenerated, notes) = reimport(&paths);
    for path in &paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(again) = regenerated.get(&name) else {
            panic!("{name} not regenerated; got {:?}", regenerated.keys());
        };
        assert_same_schema(&name, &read_crd(path), again);
        assert_server_accepts(&server, &name, again);
    }
    // Step 3: what is left out is reported, and it is only what no marker carries.
    assert!(!notes.is_empty());
    for note in &notes {
        assert!(
            ["`oneOf`", "`anyOf`", "`allOf`", "`not`"]
                .iter()
                .any(|k| note.contains(k)),
            "unexpected note: {note}"
        );
    }
}

/// Every shape import-crd maps (`testdata/import/`) comes back, nothing is left out,
/// and the server accepts the result.
#[tokio::test]
async fn every_shape_comes_back_and_the_server_accepts_it() {
    let path = repo().join("codegen/testdata/import/shapes.kubegen.dev_widgets.yaml");
    let (regenerated, notes) = reimport(std::slice::from_ref(&path));
    assert!(notes.is_empty(), "{notes:?}");
    let again = &regenerated["shapes.kubegen.dev_widgets.yaml"];
    assert_same_schema("shapes", &read_crd(&path), again);
    // Without a fence, a description comes back exactly (step 1 not needed).
    assert_eq!(
        again.pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec/description"),
        Some(&json!("The desired widget."))
    );
    let server = TestServer::start().await.unwrap();
    assert_server_accepts(&server, "shapes", again);
}

/// types → CRD → imported types → CRD for an API tree.
fn types_round_trip(apis: &Path, exceptions: &PluralExceptions) {
    let first = files::manifests(apis, exceptions).unwrap();
    assert!(!first.is_empty(), "{}: no CRDs", apis.display());
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, crd) in &first {
        let p = dir.path().join(name);
        fs::write(&p, serde_json::to_string_pretty(crd).unwrap()).unwrap();
        paths.push(p);
    }
    let (again, _) = reimport(&paths);
    let first: BTreeMap<String, Value> = first.into_iter().collect();
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        again.keys().collect::<Vec<_>>()
    );
    for (name, crd) in &first {
        assert_same_schema(name, crd, &again[name]);
    }
}

#[test]
fn the_crd_test_trees_types_come_back() {
    types_round_trip(
        &repo().join("codegen/testdata/crd/apis"),
        &PluralExceptions::default(),
    );
}

#[test]
fn the_sample_controllers_foo_comes_back() {
    types_round_trip(
        &repo().join("examples/sample-controller/src/apis"),
        &PluralExceptions::default(),
    );
}

/// `testdata/apis` without `samplecontroller/v1alpha1`, whose `Phase` shows every enum
/// shape the client generators handle, including two no structural schema can express
/// (a tuple variant, unit and data variants mixed): the CRD generator rejects it, so
/// there is no CRD to start from. The tree predates CRD generation: its Widget, in v1
/// and v2beta1, marks no storage version, which controller-gen's rule (exactly one)
/// requires, so the copy marks v1.
#[test]
fn the_codegen_test_trees_types_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let apis = dir.path().join("apis");
    copy_tree(&repo().join("codegen/testdata/apis"), &apis);
    fs::remove_dir_all(apis.join("samplecontroller/v1alpha1")).unwrap();
    let widgets = apis.join("widgets/v1/mod.rs");
    let text = fs::read_to_string(&widgets).unwrap();
    let marked = text.replace(
        "/// +genclient:nonNamespaced\n",
        "/// +genclient:nonNamespaced\n/// +kubebuilder:storageversion\n",
    );
    assert_ne!(marked, text);
    fs::write(&widgets, marked).unwrap();
    let mut exceptions = PluralExceptions::default();
    exceptions.add_spec("Cactus:cacti").unwrap();
    types_round_trip(&apis, &exceptions);
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}
