//! Entry points of the fuzz targets (`fuzz/`, `hack/fuzz.sh`) and of their corpus
//! regression tests (`codegen/tests/fuzz_corpus.rs`, on stable): the same function in both,
//! so a crash the fuzzer found stays fixed. Not public API.

use crate::ctxt::Ctxt;
/// The marker line parser (`// +key=value` → key and value), for the property tests.
pub use crate::markers::parse_marker_line;
use crate::markers::{RawMarker, interpret};
use crate::{FileContext, expand_derive_resource, expand_derive_schema, expand_file};

/// Arbitrary source text through the marker parser (line by line), and, when it parses
/// as Rust, through the CLI's expansion, both derives and the RBAC reader: each yields
/// output or errors, never a panic.
pub fn markers(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.lines() {
        let Some((key, value)) = parse_marker_line(line) else {
            continue;
        };
        let raw = RawMarker {
            key: key.to_owned(),
            value: value.map(str::to_owned),
            span: proc_macro2::Span::call_site(),
            attr: None,
        };
        let cx = Ctxt::new();
        let _ = interpret(&raw, &cx);
        cx.discard();
    }
    #[cfg(feature = "files")]
    {
        let mut diagnostics = Vec::new();
        let _ =
            crate::rbac::files::markers_in(std::path::Path::new("fuzz.rs"), text, &mut diagnostics);
    }
    let Ok(file) = syn::parse_file(text) else {
        return;
    };
    let ctx = FileContext {
        group: Some("example.com".into()),
        version: "v1".into(),
        ..FileContext::default()
    };
    let _ = expand_file(&file, &ctx);
    for item in &file.items {
        let tokens = match item {
            syn::Item::Struct(s) => quote::quote!(#s),
            syn::Item::Enum(e) => quote::quote!(#e),
            _ => continue,
        };
        if let Ok(input) = syn::parse2::<syn::DeriveInput>(tokens) {
            let _ = expand_derive_resource(&input);
            let _ = expand_derive_schema(&input);
        }
    }
}

/// Arbitrary text read as CRD manifests by `import-crd`: CRD versions or an error naming
/// the file, never a panic.
#[cfg(feature = "files")]
pub fn crd_manifest(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = crate::import::crd_file::parse(std::path::Path::new("fuzz.yaml"), text);
}
