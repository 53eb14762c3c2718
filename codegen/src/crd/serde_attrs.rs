//! The `#[serde(...)]` attributes that decide a type's JSON shape, read as serde_derive
//! reads them (`serde_derive/src/internals/attr.rs`, case rules in `case.rs`): container
//! `rename_all`, `tag`, `content`, `untagged`, `transparent`, `default`; field `rename`,
//! `skip`, `skip_deserializing`, `default`, `flatten`, `alias`; variant `rename`, `skip`,
//! `rename_all`, `alias`. Other keys (`skip_serializing_if`, `with`, `bound` ...) do not change the
//! shape an API server sees, or are not representable, and are ignored.

use crate::ctxt::Ctxt;

/// serde's `rename_all` rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

impl RenameRule {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return None,
        })
    }

    /// A field name (written in snake_case) under this rule (serde's
    /// `apply_to_field`).
    pub fn field(self, name: &str) -> String {
        match self {
            Self::Lower | Self::Snake => name.to_owned(),
            Self::Upper | Self::ScreamingSnake => name.to_ascii_uppercase(),
            Self::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for c in name.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            Self::Camel => {
                let pascal = Self::Pascal.field(name);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            Self::Kebab => name.replace('_', "-"),
            Self::ScreamingKebab => name.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// A variant name (written in PascalCase) under this rule (serde's
    /// `apply_to_variant`).
    pub fn variant(self, name: &str) -> String {
        match self {
            Self::Pascal => name.to_owned(),
            Self::Lower => name.to_ascii_lowercase(),
            Self::Upper => name.to_ascii_uppercase(),
            Self::Camel => {
                let mut chars = name.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            Self::Snake => {
                let mut out = String::new();
                for (i, c) in name.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            Self::ScreamingSnake => Self::Snake.variant(name).to_ascii_uppercase(),
            Self::Kebab => Self::Snake.variant(name).replace('_', "-"),
            Self::ScreamingKebab => Self::ScreamingSnake.variant(name).replace('_', "-"),
        }
    }
}

/// Container attributes.
#[derive(Clone, Debug, Default)]
pub struct Container {
    /// `rename_all` (the deserialize rule when the two differ).
    pub rename_all: Option<RenameRule>,
    /// `tag = "..."` (internally or, with `content`, adjacently tagged).
    pub tag: Option<String>,
    /// `content = "..."`.
    pub content: Option<String>,
    /// `untagged`.
    pub untagged: bool,
    /// `transparent`.
    pub transparent: bool,
    /// `default`: every missing field takes the container's default.
    pub default: bool,
}

/// Field attributes.
#[derive(Clone, Debug, Default)]
pub struct Field {
    /// `rename = "..."`.
    pub rename: Option<String>,
    /// `skip` or `skip_deserializing`: never read, so not part of the schema.
    pub skip: bool,
    /// `default` or `default = "path"`.
    pub default: bool,
    /// `flatten`.
    pub flatten: bool,
    /// `alias = "..."` (each one): other names serde reads the field from.
    pub aliases: Vec<String>,
}

/// Variant attributes.
#[derive(Clone, Debug, Default)]
pub struct Variant {
    /// `rename = "..."`.
    pub rename: Option<String>,
    /// `skip` or `skip_deserializing`.
    pub skip: bool,
    /// `rename_all` for a struct variant's fields.
    pub rename_all: Option<RenameRule>,
    /// `alias = "..."` (each one): other names serde reads the variant from.
    pub aliases: Vec<String>,
}

/// `name = "x"` or `name(serialize = "a", deserialize = "b")` (the deserialize form, as
/// the server's input is what a schema describes).
fn string_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<String> {
    if meta.input.peek(syn::Token![=]) {
        let s: syn::LitStr = meta.value()?.parse()?;
        return Ok(s.value());
    }
    let mut ser = None;
    let mut de = None;
    meta.parse_nested_meta(|inner| {
        let s: syn::LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("deserialize") {
            de = Some(s.value());
        } else {
            ser = Some(s.value());
        }
        Ok(())
    })?;
    de.or(ser)
        .ok_or_else(|| meta.error("expected `= \"...\"` or `(deserialize = \"...\")`"))
}

/// Skips the value of a key this reader does not interpret.
fn skip_rest(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

fn rename_rule(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<RenameRule> {
    let s = string_value(meta)?;
    RenameRule::parse(&s).ok_or_else(|| meta.error(format!("unknown rename rule `{s}`")))
}

fn each_serde(
    attrs: &[syn::Attribute],
    cx: &Ctxt,
    mut f: impl FnMut(&syn::meta::ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        if let Err(e) = attr.parse_nested_meta(|meta| f(&meta)) {
            cx.syn_error(e);
        }
    }
}

impl Container {
    /// Reads a type's `#[serde(...)]`; malformed attributes are reported to `cx`.
    pub fn from_attrs(attrs: &[syn::Attribute], cx: &Ctxt) -> Self {
        let mut out = Self::default();
        each_serde(attrs, cx, |meta| {
            let p = &meta.path;
            if p.is_ident("rename_all") {
                out.rename_all = Some(rename_rule(meta)?);
            } else if p.is_ident("tag") {
                out.tag = Some(string_value(meta)?);
            } else if p.is_ident("content") {
                out.content = Some(string_value(meta)?);
            } else if p.is_ident("untagged") {
                out.untagged = true;
            } else if p.is_ident("transparent") {
                out.transparent = true;
            } else if p.is_ident("default") {
                out.default = true;
                skip_rest(meta)?;
            } else {
                skip_rest(meta)?;
            }
            Ok(())
        });
        out
    }
}

impl Field {
    /// Reads a field's `#[serde(...)]`.
    pub fn from_attrs(attrs: &[syn::Attribute], cx: &Ctxt) -> Self {
        let mut out = Self::default();
        each_serde(attrs, cx, |meta| {
            let p = &meta.path;
            if p.is_ident("rename") {
                out.rename = Some(string_value(meta)?);
            } else if p.is_ident("skip") || p.is_ident("skip_deserializing") {
                out.skip = true;
            } else if p.is_ident("default") {
                out.default = true;
                skip_rest(meta)?;
            } else if p.is_ident("flatten") {
                out.flatten = true;
            } else if p.is_ident("alias") {
                out.aliases.push(string_value(meta)?);
            } else {
                skip_rest(meta)?;
            }
            Ok(())
        });
        out
    }
}

impl Variant {
    /// Reads a variant's `#[serde(...)]`.
    pub fn from_attrs(attrs: &[syn::Attribute], cx: &Ctxt) -> Self {
        let mut out = Self::default();
        each_serde(attrs, cx, |meta| {
            let p = &meta.path;
            if p.is_ident("rename") {
                out.rename = Some(string_value(meta)?);
            } else if p.is_ident("skip") || p.is_ident("skip_deserializing") {
                out.skip = true;
            } else if p.is_ident("rename_all") {
                out.rename_all = Some(rename_rule(meta)?);
            } else if p.is_ident("alias") {
                out.aliases.push(string_value(meta)?);
            } else {
                skip_rest(meta)?;
            }
            Ok(())
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_rules_follow_serde_case_rs() {
        let f = "available_replicas";
        assert_eq!(RenameRule::Camel.field(f), "availableReplicas");
        assert_eq!(RenameRule::Pascal.field(f), "AvailableReplicas");
        assert_eq!(RenameRule::ScreamingSnake.field(f), "AVAILABLE_REPLICAS");
        assert_eq!(RenameRule::Kebab.field(f), "available-replicas");
        let v = "RollingUpdate";
        assert_eq!(RenameRule::Camel.variant(v), "rollingUpdate");
        assert_eq!(RenameRule::Snake.variant(v), "rolling_update");
        assert_eq!(RenameRule::Lower.variant(v), "rollingupdate");
        assert_eq!(RenameRule::ScreamingKebab.variant(v), "ROLLING-UPDATE");
    }

    #[test]
    fn container_and_field_attributes_are_read() {
        let item: syn::ItemStruct = syn::parse_quote! {
            #[serde(rename_all = "camelCase", tag = "kind", deny_unknown_fields)]
            struct S {
                #[serde(rename(serialize = "a", deserialize = "b"), default = "d")]
                x: i32,
                #[serde(flatten, skip_serializing_if = "Option::is_none")]
                y: Option<T>,
            }
        };
        let cx = Ctxt::new();
        let c = Container::from_attrs(&item.attrs, &cx);
        let fields: Vec<Field> = item
            .fields
            .iter()
            .map(|f| Field::from_attrs(&f.attrs, &cx))
            .collect();
        cx.check().expect("valid");
        assert_eq!(c.rename_all, Some(RenameRule::Camel));
        assert_eq!(c.tag.as_deref(), Some("kind"));
        assert_eq!(fields[0].rename.as_deref(), Some("b"));
        assert!(fields[0].default && fields[1].flatten);
    }
}
