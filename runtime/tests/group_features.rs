//! The built-in API groups' cargo features (runtime/Cargo.toml) agree with the generated
//! tree (runtime/src/kubernetes, `--group-features kubegen`): every group module has its
//! feature, `kubernetes` turns on every group and the apply configurations, and a group
//! whose apply configurations name another group's turns that group on, so every single
//! group builds with `applyconfig` (a drifting list fails here, not in a user's build).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `[features]` table of runtime/Cargo.toml: name → what it turns on.
fn features() -> BTreeMap<String, Vec<String>> {
    let manifest = fs::read_to_string(crate_dir().join("Cargo.toml")).expect("Cargo.toml");
    let table = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("a [features] table")
        .split("\n[")
        .next()
        .unwrap_or_default();
    let mut out = BTreeMap::new();
    let mut pending = String::new();
    for line in table.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        pending.push_str(line);
        if pending.matches('[').count() > pending.matches(']').count() {
            continue;
        }
        let (name, value) = pending.split_once('=').expect("name = [..]");
        let enables = value
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(|v| v.trim().trim_matches('"').to_owned())
            .filter(|v| !v.is_empty())
            .collect();
        out.insert(name.trim().to_owned(), enables);
        pending.clear();
    }
    out
}

fn subdirs(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .expect("directory")
        .map(|e| e.expect("entry"))
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every feature `name` turns on, itself included.
fn closure(features: &BTreeMap<String, Vec<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_owned()];
    while let Some(f) = todo.pop() {
        if seen.insert(f.clone()) {
            todo.extend(features.get(&f).into_iter().flatten().cloned());
        }
    }
    seen
}

fn groups() -> BTreeSet<String> {
    subdirs(&crate_dir().join("src/kubernetes/clientset/versioned/typed"))
}

#[test]
fn every_generated_group_is_a_feature_and_kubernetes_is_all_of_them() {
    let features = features();
    let groups = groups();
    assert!(
        groups.contains("apps") && groups.contains("core"),
        "{groups:?}"
    );
    for group in &groups {
        assert!(
            features.contains_key(group),
            "no feature `{group}` in runtime/Cargo.toml"
        );
    }
    let all = closure(&features, "kubernetes");
    for group in &groups {
        assert!(
            all.contains(group),
            "`kubernetes` does not turn on `{group}`"
        );
    }
    assert!(
        all.contains("applyconfig"),
        "`kubernetes` does not turn on `applyconfig`"
    );
    let defaults = closure(&features, "default");
    let on_by_default: Vec<_> = groups.intersection(&defaults).collect();
    assert!(
        on_by_default.is_empty(),
        "groups on by default: {on_by_default:?}"
    );
}

#[test]
fn a_group_turns_on_every_group_its_apply_configurations_name() {
    let features = features();
    let root = crate_dir().join("src/kubernetes/applyconfiguration");
    let ungated: BTreeSet<String> = subdirs(&root).difference(&groups()).cloned().collect();
    assert_eq!(
        ungated,
        BTreeSet::from(["meta".to_owned()]),
        "groups without a feature"
    );
    for group in subdirs(&root).intersection(&groups()) {
        let on = closure(&features, group);
        let mut files = Vec::new();
        rs_files(&root.join(group), &mut files);
        for file in files {
            let text = fs::read_to_string(&file).expect("read");
            for (at, _) in text.match_indices("applyconfiguration::") {
                let named: String = text[at + "applyconfiguration::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if named.is_empty() || ungated.contains(&named) {
                    continue;
                }
                assert!(
                    on.contains(&named),
                    "{} names `{named}`'s apply configurations, but feature `{group}` does not turn on `{named}`",
                    file.display()
                );
            }
        }
    }
}
