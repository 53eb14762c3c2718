//! What an apply configuration is made of, whichever source it comes from (Rust types
//! through [`super::from_rust`], Kubernetes' OpenAPI definitions through
//! [`super::from_definitions`]).

use proc_macro2::{Ident, TokenStream};

/// One apply configuration struct (`DeploymentSpecApplyConfiguration`).
#[derive(Clone, Debug)]
pub struct ApplyType {
    /// The configuration's name.
    pub ident: Ident,
    /// Its visibility (the configured type's).
    pub vis: TokenStream,
    /// The type it configures, as the generated code names it (`Foo`,
    /// `::kubegen::__private::k8s_openapi::api::apps::v1::DeploymentSpec`).
    pub of: TokenStream,
    /// Doc text of the configured type (first paragraph).
    pub doc: String,
    /// Every field, in the type's order.
    pub fields: Vec<ApplyField>,
    /// Set for a resource (the root of an apply request).
    pub root: Option<Root>,
    /// The Kubernetes version (`1_36`) that introduced the configured k8s-openapi type,
    /// when newer than k8s-openapi's earliest: its `HasApplyConfiguration` impl is then
    /// compiled only for that version on.
    pub since: Option<String>,
}

/// One optional field of a configuration.
#[derive(Clone, Debug)]
pub struct ApplyField {
    /// The JSON name.
    pub json: String,
    /// The Rust field name.
    pub ident: Ident,
    /// Doc text (first paragraph).
    pub doc: String,
    /// The configuration type of a value, of a list element or of a map value.
    pub ty: TokenStream,
    /// How the field holds it.
    pub shape: Shape,
}

/// How a field holds its configuration type, which decides its builder method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One value: `with_x(v)` sets it.
    Single,
    /// One value behind a `Box` (a type that contains itself).
    Boxed,
    /// A list: `with_x(items)` appends (client-go's `WithX(values ...)`).
    List,
    /// A map with string keys: `with_x(entries)` inserts.
    Map,
}

/// What a resource's root configuration adds.
#[derive(Clone, Debug)]
pub struct Root {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// The object the server answers with (`Foo`).
    pub object: TokenStream,
    /// Namespaced: the constructor takes a namespace.
    pub namespaced: bool,
    /// A status subresource exists: `extract_<kind>_status` too.
    pub status: bool,
    /// The type has no `apiVersion`/`kind` fields of its own (a Rust type: kube's types
    /// carry them in `Resource`), so the configuration adds them.
    pub add_type_meta: bool,
    /// It has a `metadata` field: the `with_name`, `with_labels`, ... shortcuts.
    pub metadata: bool,
}
