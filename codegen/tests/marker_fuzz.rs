//! Arbitrary marker text never panics the parser or the derive expansion: it either
//! yields markers or spanned errors.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use proptest::prelude::*;

const PREFIXES: &[&str] = &[
    "+genclient",
    "+genclient:",
    "+genclient:method=",
    "+genclient:method=Foo,verb=",
    "+genclient:onlyVerbs=",
    "+genclient:skipVerbs=",
    "+genclient:nonNamespaced",
    "+groupName=",
    "+resourceName=",
    "+k8s:deepcopy-gen=",
    "+kubegen:",
    "+",
    "",
];

fn marker_text() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(PREFIXES),
        "[ -~\\n\u{e9}\u{1F600}]{0,40}",
    )
        .prop_map(|(prefix, rest)| format!("{prefix}{rest}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn marker_lines_never_panic_and_keys_have_no_whitespace(line in "\\PC{0,60}") {
        if let Some((key, _)) = kubegen_codegen::fuzz::parse_marker_line(&line) {
            prop_assert!(!key.is_empty());
            prop_assert!(!key.chars().any(char::is_whitespace));
        }
    }

    #[test]
    fn derive_expansion_never_panics_on_arbitrary_doc_markers(
        lines in proptest::collection::vec(marker_text(), 1..5)
    ) {
        let docs = lines.iter().map(|l| syn::LitStr::new(l, proc_macro2::Span::call_site()));
        let input: syn::DeriveInput = syn::parse_quote! {
            #(#[doc = #docs])*
            #[resource(group = "example.com", version = "v1")]
            pub struct Foo { pub metadata: ObjectMeta, pub status: Option<String> }
        };
        let out = kubegen_codegen::expand_derive_resource(&input);
        // Whatever the markers, the output is either the impls or errors plus stubs,
        // and always parses as items.
        let file: syn::File = syn::parse2(out).unwrap();
        prop_assert!(!file.items.is_empty());
    }

    #[test]
    fn attribute_values_never_panic(value in marker_text()) {
        let lit = syn::LitStr::new(&value, proc_macro2::Span::call_site());
        for key in ["group", "version", "kind", "plural", "only_verbs", "skip_verbs", "method"] {
            let key = syn::Ident::new(key, proc_macro2::Span::call_site());
            let input: syn::DeriveInput = syn::parse_quote! {
                #[resource(#key = #lit)]
                pub struct Foo { pub metadata: ObjectMeta }
            };
            let out = kubegen_codegen::expand_derive_resource(&input);
            prop_assert!(syn::parse2::<syn::File>(out).is_ok());
        }
    }
}
