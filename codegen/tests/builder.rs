//! `build.rs` mode (`kubegen_codegen::Builder`): the one file for `include!` holds
//! exactly what the CLI writes (its files inlined as modules), Cargo's directives cover
//! the tree, and marker errors fail the build as `file:line: message`.
//!
//! Cargo's build-script contract (doc.rust-lang.org/cargo/reference/build-scripts.html):
//! write only below OUT_DIR, `cargo:rerun-if-changed=PATH` (a directory is scanned for
//! any modified file), `cargo:warning=MESSAGE` shown to the user, a failing exit status
//! fails the build.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use kubegen_codegen::{Builder, Generator, Root};
use quote::ToTokens;

/// The test tree's builder, configured as hack/update-codegen.sh configures the CLI.
fn builder(apis: &Path) -> Builder {
    Builder::new()
        .input_dir(apis)
        .input_module("crate::apis")
        .output_module("crate::client")
        .with_fake(true)
        .with_applyconfig(true)
        .plural_exception("Cactus:cacti")
        .boilerplate(common::testdata().join("boilerplate.txt"))
}

/// A copy of the test tree without its committed zz_generated_*.rs files.
fn tree_without_generated_files() -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = common::scratch_copy();
    let apis = root.join("apis");
    let mut stack = vec![apis.clone()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("zz_generated_"))
            {
                fs::remove_file(path).unwrap();
            }
        }
    }
    (dir, apis)
}

/// Comparable tokens: prettyplease adds a trailing comma to call arguments it breaks
/// over lines, which depends on how deeply the item is nested, so those are dropped.
fn norm(tokens: &impl ToTokens) -> String {
    let text: String = tokens
        .to_token_stream()
        .to_string()
        .split_whitespace()
        .collect();
    // Trailing commas come and go with prettyplease's line breaks.
    [(",)", ")"), (",>", ">"), (",]", "]"), (",}", "}")]
        .iter()
        .fold(unblock_arms(&text), |t, (from, to)| t.replace(from, to))
}

/// Rewrites each single-statement block arm `=>{e;}` as `=>e,`: prettyplease prints the
/// same arm either way depending on how deeply it is nested.
fn unblock_arms(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("=>{") {
        out.push_str(&rest[..at + 2]);
        let body = &rest[at + 3..];
        match body.find(['{', '}', ';']) {
            Some(end) if body[end..].starts_with(";}") => {
                out.push_str(&body[..end]);
                out.push(',');
                rest = &body[end + 2..];
            }
            _ => {
                out.push('{');
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

fn tokens(items: &[syn::Item]) -> Vec<String> {
    items.iter().map(norm).collect()
}

/// The inline module at `path` below `items`.
fn module<'a>(items: &'a [syn::Item], path: &[String]) -> &'a syn::ItemMod {
    let (first, rest) = path.split_first().unwrap();
    let found = items
        .iter()
        .find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == first => Some(m),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no module `{first}`"));
    if rest.is_empty() {
        found
    } else {
        module(&found.content.as_ref().unwrap().1, rest)
    }
}

/// `items` with every inline module turned back into a `mod x;` declaration.
fn declarations_only(items: &[syn::Item]) -> Vec<syn::Item> {
    items
        .iter()
        .cloned()
        .map(|item| match item {
            syn::Item::Mod(mut m) => {
                // Docs are compared separately: the inline module carries the
                // declaration's docs followed by its file's.
                m.content = None;
                m.semi = Some(Default::default());
                m.attrs.retain(|a| !a.path().is_ident("doc"));
                syn::Item::Mod(m)
            }
            other => other,
        })
        .collect()
}

#[test]
fn the_included_file_is_the_cli_output_inlined() {
    let (_tmp, apis) = tree_without_generated_files();
    let text = builder(&apis).generate().unwrap();
    assert!(text.starts_with("// Copyright"), "boilerplate first");
    let built: syn::File = syn::parse_file(&text).unwrap();
    assert!(built.attrs.is_empty(), "include! takes no inner attributes");

    let cli = Generator::new(common::config(&common::testdata()))
        .unwrap()
        .generate()
        .unwrap();
    let mut impls_seen = 0;
    for file in &cli {
        let parsed: syn::File = syn::parse_file(&file.contents).unwrap();
        match file.root {
            Root::Output => {
                // clientset/versioned/typed/widgets/v1/widget.rs -> module path.
                let mut path: Vec<String> = file
                    .path
                    .with_extension("")
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                if path.last().is_some_and(|l| l == "mod") {
                    path.pop();
                }
                let (attrs, items) = if path.is_empty() {
                    (Vec::new(), built.items.clone())
                } else {
                    let m = module(&built.items, &path);
                    // The file's own (inner) docs end the inline module's attributes.
                    let file_docs =
                        m.attrs[m.attrs.len().saturating_sub(parsed.attrs.len())..].to_vec();
                    (file_docs, m.content.as_ref().unwrap().1.clone())
                };
                let items: Vec<syn::Item> = declarations_only(&items)
                    .into_iter()
                    .filter(|i| !matches!(i, syn::Item::Mod(m) if m.ident == "__kubegen_impls"))
                    .collect();
                assert_eq!(
                    tokens(&items),
                    tokens(&declarations_only(&parsed.items)),
                    "{}",
                    file.path.display()
                );
                if !path.is_empty() {
                    let outer = |a: &syn::Attribute| norm(a).replacen("#!", "#", 1);
                    let want: Vec<String> = parsed.attrs.iter().map(outer).collect();
                    let got: Vec<String> = attrs.iter().map(outer).collect();
                    assert_eq!(got, want, "{}", file.path.display());
                }
            }
            Root::Input => {
                // samplecontroller/v1alpha1/zz_generated_deepcopy.rs: its impls are in
                // __kubegen_impls::samplecontroller::v1alpha1, after `use` lines naming
                // the types by their public path.
                let dir: Vec<String> = file
                    .path
                    .parent()
                    .unwrap()
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                let mut path = vec!["__kubegen_impls".to_owned()];
                path.extend(dir.iter().cloned());
                let m = module(&built.items, &path);
                let in_build = tokens(&m.content.as_ref().unwrap().1);
                for item in parsed
                    .items
                    .iter()
                    .filter(|i| !matches!(i, syn::Item::Use(_)))
                {
                    let item = norm(item);
                    assert!(in_build.contains(&item), "{}: {item}", file.path.display());
                    impls_seen += 1;
                }
                for u in m.content.as_ref().unwrap().1.iter() {
                    if let syn::Item::Use(u) = u {
                        let text = u.to_token_stream().to_string();
                        let prefix = format!("use crate :: apis :: {} :: {} ::", dir[0], dir[1]);
                        assert!(text.starts_with(&prefix), "{text}");
                    }
                }
            }
        }
    }
    assert!(
        impls_seen > 10,
        "the test tree has many impls: {impls_seen}"
    );
}

#[test]
fn compile_writes_the_file_and_watches_every_file_of_the_tree() {
    let (tmp, apis) = tree_without_generated_files();
    let out = tmp.path().join("out");
    let mut cargo = Vec::new();
    let written = builder(&apis).out_dir(&out).compile_to(&mut cargo).unwrap();
    assert_eq!(written, out.join("kubegen.rs"));
    assert_eq!(
        fs::read_to_string(&written).unwrap(),
        builder(&apis).generate().unwrap()
    );
    let printed = String::from_utf8(cargo).unwrap();
    let watched: Vec<&str> = printed
        .lines()
        .map(|l| l.strip_prefix("cargo:rerun-if-changed=").unwrap())
        .collect();
    // The directory (a new file appears) and every file in it (Cargo compares mtimes).
    assert!(watched.contains(&apis.to_str().unwrap()));
    for rel in [
        "mod.rs",
        "samplecontroller/v1alpha1/mod.rs",
        "samplecontroller/v1alpha1/types.rs",
        "widgets/v2beta1/mod.rs",
    ] {
        let path = apis.join(rel);
        assert!(
            watched.contains(&path.to_str().unwrap()),
            "{rel}: {watched:?}"
        );
    }
    assert!(watched.iter().any(|w| w.ends_with("boilerplate.txt")));
}

#[test]
fn a_bad_marker_fails_the_build_with_file_line_message() {
    let tmp = tempfile::tempdir().unwrap();
    common::write_tree(
        tmp.path(),
        &[
            (
                "apis/example/v1/mod.rs",
                "//! +groupName=example.com\n//! +k8s:deepcopy-gen=package\n\nmod types;\npub use types::*;\n",
            ),
            (
                "apis/example/v1/types.rs",
                "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
                 \n\
                 /// +genclient\n\
                 /// +genclient:nostatus\n\
                 pub struct Foo { pub metadata: ObjectMeta }\n\
                 \n\
                 /// +genclient\n\
                 /// +genclient:onlyVerbs=get,frob\n\
                 pub struct Bar { pub metadata: ObjectMeta }\n",
            ),
        ],
    );
    let out = tmp.path().join("out");
    let mut cargo = Vec::new();
    let err = Builder::new()
        .input_dir(tmp.path().join("apis"))
        .out_dir(&out)
        .compile_to(&mut cargo)
        .unwrap_err();
    let types = tmp.path().join("apis/example/v1/types.rs");
    let first = format!(
        "{}:4: unknown marker `+genclient:nostatus`; did you mean `+genclient:noStatus`?",
        types.display()
    );
    let second = format!(
        "{}:8: unknown verb `frob` in `+genclient:onlyVerbs`",
        types.display()
    );
    // What `fn main() -> Result<(), BuildError>` prints when the script fails.
    let shown = format!("{err:?}");
    assert!(
        shown.starts_with("kubegen-codegen: 2 problems in the API tree:\n"),
        "{shown}"
    );
    assert!(shown.contains(&first), "{shown}");
    assert!(shown.contains(&second), "{shown}");
    // Cargo shows each as a warning of the package.
    let printed = String::from_utf8(cargo).unwrap();
    let warnings: Vec<&str> = printed
        .lines()
        .filter_map(|l| l.strip_prefix("cargo:warning="))
        .collect();
    assert_eq!(warnings.len(), 2, "{printed}");
    assert_eq!(warnings[0], first);
    assert!(warnings[1].starts_with(&second), "{}", warnings[1]);
    // Fixing the file must rerun the script: it is watched even though the run failed.
    assert!(printed.contains(&format!("cargo:rerun-if-changed={}", types.display())));
    assert!(
        !out.join("kubegen.rs").exists(),
        "nothing written on failure"
    );
}

#[test]
fn committed_generated_files_are_refused_as_duplicate_impls() {
    let (_tmp, root) = common::scratch_copy();
    let err = builder(&root.join("apis")).generate().unwrap_err();
    let paths: Vec<String> = err
        .diagnostics()
        .iter()
        .map(|d| d.path.display().to_string())
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| p.ends_with("samplecontroller/v1alpha1/zz_generated_deepcopy.rs")),
        "{paths:?}"
    );
    assert!(
        err.to_string()
            .contains("build.rs mode generates these impls into OUT_DIR")
    );
}

#[test]
fn bad_options_name_the_builder_method() {
    let err = Builder::new()
        .input_dir(common::testdata().join("apis"))
        .input_module("crate::")
        .generate()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid configuration: input_module(\"crate::\") is not a Rust module path"
    );
    let err = Builder::new()
        .input_dir("/nonexistent/apis")
        .generate()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("input_dir(\"/nonexistent/apis\") is not a directory")
    );
}
