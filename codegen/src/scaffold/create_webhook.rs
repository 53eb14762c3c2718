//! `kubegen-codegen create-webhook`: admission and conversion webhooks for a kind of a
//! project `init` made (kubebuilder's `create webhook`).
//!
//! * `--defaulting` / `--validation`: `src/webhooks/<kind>.rs`, the handlers (a
//!   `kubegen::webhook::Defaulter` and / or `Validator` of the kind) under their
//!   `+kubebuilder:webhook` markers (kubebuilder's paths and names:
//!   `/mutate-<group>-<version>-<kind>`, `m<kind>-<version>.kb.io`; `/validate-...`,
//!   `v<kind>-<version>.kb.io`), and `src/webhooks/<kind>_test.rs`, their test; the index
//!   `src/webhooks/mod.rs` and `mod webhooks;` in `src/main.rs`.
//! * `--conversion`: the kind's versions convert through the hub, the version marked
//!   `+kubebuilder:storageversion` (two or more versions needed): the hub's type gets
//!   `+kubebuilder:webhook:conversion` (so its CRD declares `conversion: Webhook`), every
//!   other version `src/apis/<group>/<spoke>/<kind>_conversion.rs` (`TryFrom` both ways).
//!
//! The project's `kubegen` dependency gets the `webhook` feature (`Cargo.toml`, edited in
//! place). Then what is generated follows: `config/webhook/manifests.yaml`, the CRDs. Files that
//! exist are never overwritten (the index modules excepted, as `create-api` rewrites
//! them), and the generators run over a copy first, so a refusal leaves the project as
//! it was.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::cargo_manifest;
use super::create_api::{package_name, rehearse};
use super::layout::{self, APIS_DIR, File, INDEX_MARKER, Project, WEBHOOKS_DIR};
use super::templates::{self, Vars};
use super::{ApiKind, ProjectName, ScaffoldError, generated};
use crate::markers::vocabulary::{CONVERSION_WEBHOOK, STORAGE_VERSION};

/// The webhooks to add, for which kind, in which project.
#[derive(Clone, Debug, Default)]
pub struct CreateWebhookOptions {
    /// The project directory.
    pub dir: PathBuf,
    /// The kind (`Widget`).
    pub kind: String,
    /// Its group, when the kind's name alone is ambiguous.
    pub group: Option<String>,
    /// Its version, when the kind has several.
    pub version: Option<String>,
    /// A mutating webhook with a `Defaulter`.
    pub defaulting: bool,
    /// A validating webhook with a `Validator`.
    pub validation: bool,
    /// A conversion webhook for the kind's CRD.
    pub conversion: bool,
}

/// Adds the webhooks; returns the files written or edited (relative to `options.dir`;
/// regenerated files not included).
pub fn create_webhook(options: &CreateWebhookOptions) -> Result<Vec<PathBuf>, ScaffoldError> {
    if !(options.defaulting || options.validation || options.conversion) {
        return Err(ScaffoldError::NoWebhookKind);
    }
    let dir = &options.dir;
    let project_name = package_name(dir)?;
    let mut project = Project::discover(dir)?;
    let kind = find_kind(&project, options)?;

    let mut new_files = Vec::new();
    let mut edited = Vec::new();
    if options.defaulting || options.validation {
        new_files.extend(admission_files(&project_name, &kind, options));
        if let Some(main) = with_webhooks_module(dir)? {
            edited.push(main);
        }
    }
    if options.conversion {
        let (spokes, hub_file) = conversion(&project, dir, &kind)?;
        for spoke in &spokes {
            let vars = Vars::kind(&project_name, spoke).with("hub", kind.version.clone());
            new_files.push(File {
                path: conversion_file(spoke),
                text: vars.fill(&templates::KIND_CONVERSION),
                executable: false,
            });
            project
                .version_modules
                .entry((spoke.group_mod.clone(), spoke.version.clone()))
                .or_default()
                .insert(format!("{}_conversion", spoke.kind_mod));
        }
        edited.extend(hub_file);
    }
    // The handlers and the server are behind the runtime's `webhook` feature.
    edited.extend(cargo_manifest::with_kubegen_feature(dir, "webhook")?);

    let mut index_files = Vec::new();
    if options.conversion {
        // The spokes' version modules list their new files.
        let spoke_indexes: Vec<PathBuf> = new_files
            .iter()
            .filter(|f| f.path.starts_with(APIS_DIR))
            .filter_map(|f| f.path.parent().map(|p| p.join("mod.rs")))
            .collect();
        index_files.extend(
            project
                .index_files()
                .into_iter()
                .filter(|f| spoke_indexes.contains(&f.path)),
        );
    }
    if options.defaulting || options.validation {
        index_files.push(webhooks_index(dir, &new_files)?);
    }
    layout::refuse_overwrites(dir, &new_files, &index_files)?;

    let changed: Vec<File> = new_files
        .into_iter()
        .chain(index_files)
        .chain(edited)
        .collect();
    rehearse(dir, &changed)?;
    layout::write_files(dir, &changed)?;
    generated::update(dir)?;
    tracing::info!(dir = %dir.display(), kind = %kind.kind, "added webhooks");
    Ok(changed.into_iter().map(|f| f.path).collect())
}

/// The one kind `options` names.
fn find_kind(project: &Project, options: &CreateWebhookOptions) -> Result<ApiKind, ScaffoldError> {
    let matching: Vec<&ApiKind> = project
        .kinds
        .iter()
        .filter(|k| k.kind == options.kind)
        .filter(|k| options.group.as_ref().is_none_or(|g| *g == k.group))
        .filter(|k| options.version.as_ref().is_none_or(|v| *v == k.version))
        .collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            let mut asked = options.kind.clone();
            if let Some(g) = &options.group {
                asked.push_str(&format!(" in group {g}"));
            }
            if let Some(v) = &options.version {
                asked.push_str(&format!(" of version {v}"));
            }
            Err(ScaffoldError::UnknownKind {
                kind: asked,
                known: project
                    .kinds
                    .iter()
                    .map(|k| format!("{} ({}/{})", k.kind, k.group, k.version))
                    .collect(),
            })
        }
        // A conversion webhook is the kind's, whichever version names it.
        [first, rest @ ..]
            if !(options.defaulting || options.validation)
                && rest.iter().all(|k| k.group == first.group) =>
        {
            Ok((*first).clone())
        }
        many => Err(ScaffoldError::AmbiguousKind {
            kind: options.kind.clone(),
            versions: many
                .iter()
                .map(|k| format!("{}/{}", k.group, k.version))
                .collect(),
        }),
    }
}

/// kubebuilder's webhook path segment of a kind: `<group with dashes>-<version>-<kind lower>`.
fn path_segment(kind: &ApiKind) -> String {
    format!(
        "{}-{}-{}",
        kind.group.replace('.', "-"),
        kind.version,
        kind.kind.to_lowercase()
    )
}

/// The marker lines of the webhooks `options` asks for (`//!` doc lines).
pub fn marker_lines(kind: &ApiKind, defaulting: bool, validation: bool) -> String {
    let flat = kind.kind.to_lowercase();
    let common = |verbs: &str| {
        format!(
            "failurePolicy=fail,sideEffects=None,groups={},resources={},verbs={verbs},versions={}",
            kind.group, kind.plural, kind.version
        )
    };
    let mut lines = Vec::new();
    if defaulting {
        lines.push(format!(
            "//! +kubebuilder:webhook:path=/mutate-{},mutating=true,{},name=m{flat}-{}.kb.io,admissionReviewVersions=v1",
            path_segment(kind),
            common("create;update"),
            kind.version
        ));
    }
    if validation {
        lines.push(format!(
            "//! +kubebuilder:webhook:path=/validate-{},mutating=false,{},name=v{flat}-{}.kb.io,admissionReviewVersions=v1",
            path_segment(kind),
            common("create;update"),
            kind.version
        ));
    }
    lines.join("\n")
}

/// `src/webhooks/<kind>.rs` and `src/webhooks/<kind>_test.rs`.
fn admission_files(
    project: &ProjectName,
    kind: &ApiKind,
    options: &CreateWebhookOptions,
) -> Vec<File> {
    let (d, v) = (options.defaulting, options.validation);
    let summary = match (d, v) {
        (true, true) => "defaulting (a mutating webhook) and validation (a validating webhook)",
        (true, false) => "defaulting (a mutating webhook)",
        _ => "validation (a validating webhook)",
    };
    let mut imports = vec!["Denied"];
    if d {
        imports.insert(0, "Defaulter");
    }
    if v {
        imports.extend(["Validator", "Warnings"]);
    }
    let vars = Vars::kind(project, kind)
        .with("webhook_summary", summary)
        .with("webhook_markers", marker_lines(kind, d, v))
        .with("webhook_imports", imports.join(", "));
    let mut handler = vars.fill(&templates::KIND_WEBHOOK);
    let test_imports: Vec<&str> = [(d, "Defaulter"), (v, "Validator")]
        .into_iter()
        .filter_map(|(on, t)| on.then_some(t))
        .collect();
    let mut test = vars
        .clone()
        .with("webhook_imports", test_imports.join(", "))
        .fill(&templates::KIND_WEBHOOK_TEST);
    if d {
        handler.push_str(&vars.fill(&templates::KIND_WEBHOOK_DEFAULTER));
        test.push_str(&vars.fill(&templates::KIND_WEBHOOK_DEFAULTER_TEST));
    }
    if v {
        handler.push_str(&vars.fill(&templates::KIND_WEBHOOK_VALIDATOR));
        test.push_str(&vars.fill(&templates::KIND_WEBHOOK_VALIDATOR_TEST));
    }
    let m = &kind.kind_mod;
    vec![
        File {
            path: Path::new(WEBHOOKS_DIR).join(format!("{m}.rs")),
            text: handler,
            executable: false,
        },
        File {
            path: Path::new(WEBHOOKS_DIR).join(format!("{m}_test.rs")),
            text: test,
            executable: false,
        },
    ]
}

/// `src/webhooks/mod.rs`: every handler module, and every `_test` module under
/// `#[cfg(test)]`.
fn webhooks_index(dir: &Path, new_files: &[File]) -> Result<File, ScaffoldError> {
    let mut stems: BTreeSet<String> = BTreeSet::new();
    let existing = dir.join(WEBHOOKS_DIR);
    if existing.is_dir() {
        for rel in layout::relative_files(&existing)? {
            if rel.components().count() == 1 {
                stems.extend(rs_stem(&rel));
            }
        }
    }
    for f in new_files {
        if f.path.parent() == Some(Path::new(WEBHOOKS_DIR)) {
            stems.extend(rs_stem(&f.path));
        }
    }
    stems.remove("mod");
    let mut text = format!(
        "{INDEX_MARKER}\n\n\
         //! The admission webhooks, one file per kind (`<kind>.rs`, its test `<kind>_test.rs`),\n\
         //! added by `kubegen-codegen create-webhook`; `hack/update-codegen.sh` writes their\n\
         //! markers into `config/webhook/manifests.yaml`.\n\n"
    );
    for s in stems.iter().filter(|s| !s.ends_with("_test")) {
        text.push_str(&format!("pub mod {s};\n"));
    }
    for s in stems.iter().filter(|s| s.ends_with("_test")) {
        text.push_str(&format!("#[cfg(test)]\nmod {s};\n"));
    }
    Ok(File {
        path: Path::new(WEBHOOKS_DIR).join("mod.rs"),
        text,
        executable: false,
    })
}

fn rs_stem(path: &Path) -> Option<String> {
    (path.extension()? == "rs").then(|| path.file_stem()?.to_str().map(str::to_owned))?
}

/// `src/main.rs` with `mod webhooks;` after `mod manager;` (`None`: it has it already).
fn with_webhooks_module(dir: &Path) -> Result<Option<File>, ScaffoldError> {
    let path = dir.join("src/main.rs");
    let text = fs::read_to_string(&path).map_err(|e| ScaffoldError::io(&path, e))?;
    if text.lines().any(|l| l.trim() == "mod webhooks;") {
        return Ok(None);
    }
    let Some(at) = text.find("\nmod manager;\n") else {
        return Err(ScaffoldError::CannotEdit {
            path,
            reason: "no `mod manager;` line to add `mod webhooks;` after: add `mod webhooks;` yourself and run create-webhook again".into(),
        });
    };
    let end = at + "\nmod manager;\n".len();
    let mut edited = text[..end].to_owned();
    edited.push_str("mod webhooks;\n");
    edited.push_str(&text[end..]);
    Ok(Some(File {
        path: PathBuf::from("src/main.rs"),
        text: edited,
        executable: false,
    }))
}

/// `src/apis/<group>/<spoke>/<kind>_conversion.rs`.
fn conversion_file(spoke: &ApiKind) -> PathBuf {
    Path::new(APIS_DIR)
        .join(&spoke.group_mod)
        .join(&spoke.version)
        .join(format!("{}_conversion.rs", spoke.kind_mod))
}

/// The spokes of `kind`'s group (its versions other than the hub, the one marked
/// `+kubebuilder:storageversion`), with the hub's types file carrying the conversion
/// marker (`None`: it has it). `kind` is returned as the hub when it is one; otherwise
/// the hub is looked up among the versions.
fn conversion(
    project: &Project,
    dir: &Path,
    kind: &ApiKind,
) -> Result<(Vec<ApiKind>, Option<File>), ScaffoldError> {
    let versions: Vec<&ApiKind> = project
        .kinds
        .iter()
        .filter(|k| k.kind == kind.kind && k.group == kind.group)
        .collect();
    let refuse = |reason: String| ScaffoldError::Conversion {
        kind: kind.kind.clone(),
        reason,
    };
    if versions.len() < 2 {
        return Err(refuse(format!(
            "{} has one version ({}); a conversion webhook converts between two or more (write the other version's types beside it, then run create-webhook again)",
            kind.kind, kind.version
        )));
    }
    let mut hubs = Vec::new();
    for v in &versions {
        let path = dir.join(layout::types_file(v));
        let text = fs::read_to_string(&path).map_err(|e| ScaffoldError::io(&path, e))?;
        if has_marker(&text, STORAGE_VERSION.key) {
            hubs.push((*v, path, text));
        }
    }
    let [(hub, path, text)] = hubs.as_slice() else {
        return Err(refuse(format!(
            "mark exactly one version's {} `+{}` (the hub every version converts through); {} are",
            kind.kind,
            STORAGE_VERSION.key,
            hubs.len()
        )));
    };
    if hub.version != kind.version {
        // `--version` named a spoke: the conversion is the kind's, whatever version.
        return conversion(project, dir, hub);
    }
    let spokes = versions
        .iter()
        .filter(|v| v.version != hub.version)
        .map(|v| (*v).clone())
        .collect();
    let edit = if has_marker(text, CONVERSION_WEBHOOK.key) {
        None
    } else {
        Some(File {
            path: path
                .strip_prefix(dir)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| layout::types_file(hub)),
            text: with_conversion_marker(text, &hub.kind).ok_or_else(|| ScaffoldError::CannotEdit {
                path: path.clone(),
                reason: format!(
                    "no `/// +{}` doc line on `pub struct {}` to put `/// +{}` after; add the marker yourself",
                    STORAGE_VERSION.key, hub.kind, CONVERSION_WEBHOOK.key
                ),
            })?,
            executable: false,
        })
    };
    Ok((spokes, edit))
}

fn has_marker(text: &str, key: &str) -> bool {
    text.lines().any(|l| {
        let l = l
            .trim_start()
            .trim_start_matches('/')
            .trim_start_matches('!')
            .trim();
        l.strip_prefix('+')
            .and_then(|r| r.strip_prefix(key))
            .is_some_and(|r| r.trim().is_empty())
    })
}

/// `text` with `/// +kubebuilder:webhook:conversion` after the `+kubebuilder:storageversion`
/// doc line of `pub struct <kind>`.
fn with_conversion_marker(text: &str, kind: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let decl = lines.iter().position(|l| {
        l.trim_start()
            .strip_prefix(&format!("pub struct {kind}"))
            .is_some_and(|r| r.starts_with([' ', '{', '<']))
    })?;
    let storage = (0..decl)
        .rev()
        .take_while(|i| {
            let l = lines[*i].trim_start();
            l.starts_with("///") || l.starts_with("#[")
        })
        .find(|i| has_marker(lines[*i], STORAGE_VERSION.key))?;
    let indent: String = lines[storage]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out.push_str(l);
        out.push('\n');
        if i == storage {
            out.push_str(&format!("{indent}/// +{}\n", CONVERSION_WEBHOOK.key));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_follow_kubebuilders_paths_and_names() {
        let kind = ApiKind::new("batch.tutorial.kubebuilder.io", "v1", "CronJob").expect("kind");
        assert_eq!(
            marker_lines(&kind, true, true),
            "//! +kubebuilder:webhook:path=/mutate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1\n\
             //! +kubebuilder:webhook:path=/validate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1"
        );
    }

    #[test]
    fn the_conversion_marker_goes_after_the_storage_version_marker() {
        let text = "/// A widget.\n///\n/// +genclient\n/// +kubebuilder:storageversion\n#[derive(Clone)]\npub struct Widget {\n}\n\n/// +kubebuilder:storageversion\npub struct WidgetList {}\n";
        assert_eq!(
            with_conversion_marker(text, "Widget").expect("edited"),
            "/// A widget.\n///\n/// +genclient\n/// +kubebuilder:storageversion\n/// +kubebuilder:webhook:conversion\n#[derive(Clone)]\npub struct Widget {\n}\n\n/// +kubebuilder:storageversion\npub struct WidgetList {}\n"
        );
        assert!(with_conversion_marker("pub struct Widget {}\n", "Widget").is_none());
        assert!(has_marker(
            "  /// +kubebuilder:storageversion\n",
            STORAGE_VERSION.key
        ));
        assert!(!has_marker(
            "/// +kubebuilder:storageversionx\n",
            STORAGE_VERSION.key
        ));
    }
}
