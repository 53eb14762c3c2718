//! One generator: for the same type, `#[derive(kubegen::Resource)]`'s expansion and the
//! CLI's output for that type (read from a file, with package markers) are the same
//! tokens.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use kubegen_codegen::model::DeepCopyGen;
use kubegen_codegen::{
    FileContext, expand_derive_apply_configuration, expand_derive_resource, expand_file,
};
use proc_macro2::TokenStream;

/// The derive's view: the type alone, group and version as attribute keys.
fn derive_tokens(item: &syn::ItemStruct, group: &str, version: &str) -> String {
    let mut input = syn::DeriveInput::from(item.clone());
    input
        .attrs
        .push(syn::parse_quote!(#[resource(group = #group, version = #version)]));
    expand_derive_resource(&input).to_string()
}

/// The CLI's view: the type inside a version module whose mod.rs says
/// `+groupName=<group>` and `+k8s:deepcopy-gen=package`.
fn cli_tokens(item: &syn::ItemStruct, group: &str, version: &str) -> String {
    let file = syn::File {
        shebang: None,
        attrs: Vec::new(),
        items: vec![syn::Item::Struct(item.clone())],
    };
    let ctx = FileContext {
        group: Some(group.to_owned()),
        version: version.to_owned(),
        deep_copy: Some(DeepCopyGen::Package),
        ..FileContext::default()
    };
    let out = expand_file(&file, &ctx).unwrap();
    let mut tokens = TokenStream::new();
    tokens.extend(out.resource);
    tokens.extend(out.deep_copy);
    tokens.extend(out.access);
    tokens.to_string()
}

#[test]
fn derive_and_cli_emit_identical_tokens_for_every_marker_combination() {
    let items: Vec<syn::ItemStruct> = vec![
        syn::parse_quote! {
            /// +genclient
            /// +genclient:method=GetScale,verb=get,subresource=scale,result=Scale
            pub struct Foo { pub metadata: ObjectMeta, pub spec: FooSpec, pub status: Option<FooStatus> }
        },
        syn::parse_quote! {
            /// +genclient
            /// +genclient:nonNamespaced
            /// +genclient:skipVerbs=deleteCollection
            pub struct Widget { pub metadata: ObjectMeta, pub status: Option<String> }
        },
        syn::parse_quote! {
            /// +genclient
            /// +genclient:noStatus
            /// +genclient:readonly
            /// +resourceName=bazzes
            pub struct Baz { pub metadata: ObjectMeta, pub status: Option<String> }
        },
        syn::parse_quote! {
            /// +genclient
            /// +genclient:onlyVerbs=get,list
            /// +k8s:deepcopy-gen=false
            pub struct NoCopy { pub metadata: ObjectMeta }
        },
        syn::parse_quote! {
            /// +genclient
            /// +kubegen:resourceImpl=false
            pub struct OwnImpl { pub metadata: ObjectMeta, pub data: Vec<u8> }
        },
    ];
    for item in &items {
        let derive = derive_tokens(item, "example.com", "v1");
        let cli = cli_tokens(item, "example.com", "v1");
        assert_eq!(derive, cli, "{}", item.ident);
    }
    // The comparison is not vacuous: each emitter contributed.
    assert!(derive_tokens(&items[0], "example.com", "v1").contains("Resource for Foo"));
    assert!(derive_tokens(&items[0], "example.com", "v1").contains("DeepCopy for Foo"));
    assert!(!derive_tokens(&items[3], "example.com", "v1").contains("DeepCopy"));
    assert!(!derive_tokens(&items[4], "example.com", "v1").contains("Resource for"));
    let foo = derive_tokens(&items[0], "example.com", "v1");
    for item in [
        "struct FooClient",
        "fn get_scale",
        "struct FooLister",
        "struct FooNamespaceLister",
        "fn new_foo_informer",
    ] {
        assert!(foo.contains(item), "{item} missing");
    }
    let widget = derive_tokens(&items[1], "example.com", "v1");
    assert!(
        !widget.contains("fn delete_collection"),
        "skipVerbs removes the method"
    );
    assert!(
        !widget.contains("WidgetNamespaceLister"),
        "cluster-scoped: get on the lister"
    );
    let baz = derive_tokens(&items[2], "example.com", "v1");
    assert!(
        !baz.contains("fn create") && baz.contains("fn watch"),
        "readonly"
    );
    let no_copy = derive_tokens(&items[3], "example.com", "v1");
    assert!(
        no_copy.contains("struct NoCopyLister") && !no_copy.contains("NoCopyInformer"),
        "no watch: no informer"
    );
}

#[test]
fn derive_and_cli_agree_on_the_core_group() {
    let item: syn::ItemStruct = syn::parse_quote! {
        /// +genclient
        pub struct Thing { pub metadata: ObjectMeta }
    };
    let derive = derive_tokens(&item, "", "v1");
    assert_eq!(derive, cli_tokens(&item, "", "v1"));
    assert!(derive.contains("Cow :: Borrowed (\"v1\")"), "{derive}");
}

/// Apply configurations: `#[derive(kubegen::ApplyConfiguration)]` on each type and the
/// CLI's `--with-applyconfig` for the same file emit the same configurations (the CLI's
/// files then name the configured type by its full path).
#[test]
fn derive_and_cli_emit_identical_apply_configurations() {
    let file: syn::File = syn::parse_quote! {
        /// +genclient
        pub struct Foo { pub metadata: ObjectMeta, pub spec: FooSpec, pub status: Option<FooStatus> }
        #[serde(rename_all = "camelCase")]
        pub struct FooSpec {
            pub replicas: Option<i32>,
            pub deployment_name: String,
            pub template: PodTemplateSpec,
            pub ports: Vec<ServicePort>,
            pub labels: BTreeMap<String, String>,
            #[serde(rename = "x-extra")]
            pub extra: Option<serde_json::Value>,
            pub child: Option<Box<FooSpec>>,
            #[serde(skip)]
            pub cache: u64,
        }
        pub struct FooStatus { pub phase: Phase, pub conditions: Vec<Condition> }
        pub enum Phase { Pending, Running }
        /// +genclient
        /// +genclient:nonNamespaced
        pub struct Bar { pub metadata: ObjectMeta, pub spec: Option<FooSpec> }
    };
    let ctx = FileContext {
        group: Some("example.com".to_owned()),
        version: "v1".to_owned(),
        ..FileContext::default()
    };
    let cli = expand_file(&file, &ctx)
        .unwrap()
        .apply_configuration
        .to_string();
    assert!(cli.contains("FooSpecApplyConfiguration"));
    assert!(cli.contains("extract_foo_status"));
    let mut derived = TokenStream::new();
    for item in &file.items {
        let mut input: syn::DeriveInput = match item {
            syn::Item::Struct(s) => s.clone().into(),
            syn::Item::Enum(e) => e.clone().into(),
            _ => continue,
        };
        if matches!(item, syn::Item::Struct(s) if s.ident == "Foo" || s.ident == "Bar") {
            input
                .attrs
                .push(syn::parse_quote!(#[resource(group = "example.com", version = "v1")]));
        }
        derived.extend(expand_derive_apply_configuration(&input));
    }
    assert_eq!(derived.to_string(), cli);
}
