//! The Kubernetes protobuf messages, loaded from `kubernetes.desc` (written by
//! `hack/gen-protobuf-descriptors.py` from the `k8s-pb` and `k8s-openapi` crates): for each
//! message its fields' numbers, JSON names and types, and which messages are top-level
//! kinds.

use std::{collections::HashMap, sync::OnceLock};

const TABLE: &str = include_str!("kubernetes.desc");

/// How often a field occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Card {
    /// `optional`.
    Optional,
    /// `repeated`.
    Repeated,
    /// `map<string, _>`.
    Map,
}

/// A field's (or map value's) type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `string`.
    String,
    /// `bool`.
    Bool,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `double`.
    Double,
    /// `bytes` (base64 in JSON).
    Bytes,
    /// A message (index into [`Descriptors::message`]).
    Message(usize),
}

/// Messages whose JSON form is not an object of their fields (their Go types have custom
/// JSON marshalling in apimachinery / apiextensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `metav1.Time`: RFC 3339, seconds.
    Time,
    /// `metav1.MicroTime`: RFC 3339, microseconds.
    MicroTime,
    /// `metav1.Duration`: a Go duration string.
    Duration,
    /// `resource.Quantity`: its string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `runtime.RawExtension`, `metav1.FieldsV1`, `apiextensions JSON`: embedded JSON bytes.
    RawJson,
    /// `JSONSchemaPropsOrArray`: a schema or an array of schemas.
    SchemaOrArray,
    /// `JSONSchemaPropsOrBool`: a bool or a schema.
    SchemaOrBool,
    /// `JSONSchemaPropsOrStringArray`: a schema or an array of strings.
    SchemaOrStringArray,
    /// `metav1.Verbs`, `ExtraValue`: a list of strings.
    StringList,
}

/// One field.
#[derive(Debug, Clone)]
pub struct Field {
    /// Field number.
    pub tag: u32,
    /// JSON name.
    pub json: String,
    /// Cardinality.
    pub card: Card,
    /// Type.
    pub kind: Kind,
}

impl Field {
    /// An embedded Go struct whose fields are inlined into the parent's JSON.
    pub fn inline(&self) -> bool {
        self.json == "~"
    }
}

/// One message.
#[derive(Debug, Clone)]
pub struct Message {
    /// Full name (proto package without `k8s.io.`), e.g. `api.core.v1.Pod`.
    pub name: String,
    /// Fields in declaration order.
    pub fields: Vec<Field>,
    /// Custom JSON form, if any.
    pub special: Option<Special>,
    by_tag: HashMap<u32, usize>,
}

impl Message {
    /// The field with number `tag`.
    pub fn field(&self, tag: u32) -> Option<&Field> {
        self.by_tag.get(&tag).map(|&i| &self.fields[i])
    }
}

/// All messages.
#[derive(Debug, Default)]
pub struct Descriptors {
    messages: Vec<Message>,
    by_name: HashMap<String, usize>,
    by_lower_name: HashMap<String, usize>,
    kinds: HashMap<(String, String), usize>,
    /// Lines of the table that did not parse (none in a healthy build).
    pub errors: Vec<String>,
}

fn special(name: &str) -> Option<Special> {
    let short = name.rsplit('.').next().unwrap_or_default();
    Some(match (name, short) {
        ("apimachinery.pkg.apis.meta.v1.Time", _) => Special::Time,
        ("apimachinery.pkg.apis.meta.v1.MicroTime", _) => Special::MicroTime,
        ("apimachinery.pkg.apis.meta.v1.Duration", _) => Special::Duration,
        ("apimachinery.pkg.api.resource.Quantity", _) => Special::Quantity,
        ("apimachinery.pkg.util.intstr.IntOrString", _) => Special::IntOrString,
        ("apimachinery.pkg.runtime.RawExtension", _) => Special::RawJson,
        ("apimachinery.pkg.apis.meta.v1.FieldsV1", _) => Special::RawJson,
        ("apimachinery.pkg.apis.meta.v1.Verbs", _) => Special::StringList,
        (n, "Json") if n.starts_with("apiextensions_apiserver.") => Special::RawJson,
        (n, "JsonSchemaPropsOrArray") if n.starts_with("apiextensions_apiserver.") => {
            Special::SchemaOrArray
        }
        (n, "JsonSchemaPropsOrBool") if n.starts_with("apiextensions_apiserver.") => {
            Special::SchemaOrBool
        }
        (n, "JsonSchemaPropsOrStringArray") if n.starts_with("apiextensions_apiserver.") => {
            Special::SchemaOrStringArray
        }
        (n, "ExtraValue") if n.starts_with("api.") => Special::StringList,
        _ => return None,
    })
}

/// The proto package (without `k8s.io.`) of an API group-version.
pub fn module_of(api_version: &str) -> String {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    match group {
        "" => format!("api.core.{version}"),
        "meta.k8s.io" => format!("apimachinery.pkg.apis.meta.{version}"),
        "apiextensions.k8s.io" => {
            format!("apiextensions_apiserver.pkg.apis.apiextensions.{version}")
        }
        "apiregistration.k8s.io" => format!("kube_aggregator.pkg.apis.apiregistration.{version}"),
        "internal.apiserver.k8s.io" => format!("api.apiserverinternal.{version}"),
        g => format!("api.{}.{version}", g.split('.').next().unwrap_or(g)),
    }
}

impl Descriptors {
    /// The descriptors compiled into this crate.
    pub fn get() -> &'static Descriptors {
        static D: OnceLock<Descriptors> = OnceLock::new();
        D.get_or_init(|| {
            let d = Descriptors::parse(TABLE);
            for e in &d.errors {
                tracing::error!(line = %e, "protobuf descriptor table");
            }
            d
        })
    }

    /// Parses a table.
    pub fn parse(text: &str) -> Descriptors {
        let mut d = Descriptors::default();
        // Field lines name their message type before it may be declared: resolve after.
        let mut pending: Vec<(usize, usize, String)> = Vec::new();
        let mut kinds = Vec::new();
        for line in text.lines() {
            let parts: Vec<&str> = line.split(' ').collect();
            match parts.as_slice() {
                ["M", name] => {
                    d.by_name.insert(name.to_string(), d.messages.len());
                    d.messages.push(Message {
                        name: name.to_string(),
                        fields: Vec::new(),
                        special: special(name),
                        by_tag: HashMap::new(),
                    });
                }
                ["F", tag, json, card, kind, rest @ ..] if !d.messages.is_empty() => {
                    let (Ok(tag), Some(card)) = (
                        tag.parse::<u32>(),
                        match *card {
                            "o" => Some(Card::Optional),
                            "r" => Some(Card::Repeated),
                            "m" => Some(Card::Map),
                            _ => None,
                        },
                    ) else {
                        d.errors.push(line.to_string());
                        continue;
                    };
                    let kind = match (*kind, rest) {
                        ("string", []) => Kind::String,
                        ("bool", []) => Kind::Bool,
                        ("int32", []) => Kind::Int32,
                        ("int64", []) => Kind::Int64,
                        ("double", []) => Kind::Double,
                        ("bytes", []) => Kind::Bytes,
                        ("message", [ty]) => {
                            let m = d.messages.len() - 1;
                            pending.push((m, d.messages[m].fields.len(), ty.to_string()));
                            Kind::Message(usize::MAX)
                        }
                        _ => {
                            d.errors.push(line.to_string());
                            continue;
                        }
                    };
                    let m = d.messages.len() - 1;
                    let msg = &mut d.messages[m];
                    msg.by_tag.insert(tag, msg.fields.len());
                    msg.fields.push(Field {
                        tag,
                        json: json.to_string(),
                        card,
                        kind,
                    });
                }
                ["K", api_version, kind, message] => kinds.push((
                    api_version.to_string(),
                    kind.to_string(),
                    message.to_string(),
                )),
                _ if line.starts_with('#') || line.is_empty() => {}
                _ => d.errors.push(line.to_string()),
            }
        }
        for (m, f, ty) in pending {
            match d.by_name.get(&ty) {
                Some(&i) => d.messages[m].fields[f].kind = Kind::Message(i),
                None => d.errors.push(format!("unknown message {ty}")),
            }
        }
        for (api_version, kind, message) in kinds {
            match d.by_name.get(&message) {
                Some(&i) => {
                    d.kinds.insert((api_version, kind), i);
                }
                None => d.errors.push(format!("unknown message {message}")),
            }
        }
        d.by_lower_name = d
            .by_name
            .iter()
            .map(|(k, &v)| (k.to_ascii_lowercase(), v))
            .collect();
        d
    }

    /// The message at `index`.
    pub fn message(&self, index: usize) -> &Message {
        &self.messages[index]
    }

    /// A message by full name.
    #[cfg(test)]
    pub fn by_name(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The message of `kind` in `apiVersion`: the kinds the table lists, then a message of
    /// that name in the group-version's package (lists, subresource kinds), then the
    /// `meta.k8s.io/v1` kinds every group-version carries (DeleteOptions, Status, ...).
    pub fn for_kind(&self, api_version: &str, kind: &str) -> Option<usize> {
        if let Some(&i) = self.kinds.get(&(api_version.to_string(), kind.to_string())) {
            return Some(i);
        }
        let lookup = |module: &str| {
            self.by_lower_name
                .get(&format!("{module}.{kind}").to_ascii_lowercase())
                .copied()
        };
        lookup(&module_of(api_version)).or_else(|| lookup("apimachinery.pkg.apis.meta.v1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_table_parses_cleanly_and_knows_the_common_kinds() {
        let d = Descriptors::parse(TABLE);
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        for (av, kind) in [
            ("v1", "Pod"),
            ("v1", "ConfigMap"),
            ("v1", "Namespace"),
            ("v1", "PodList"),
            ("apps/v1", "Deployment"),
            ("apps/v1", "DeploymentList"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            ("apps/v1", "DeleteOptions"),
            ("meta.k8s.io/v1", "PartialObjectMetadataList"),
            ("autoscaling/v1", "Scale"),
        ] {
            assert!(d.for_kind(av, kind).is_some(), "{av} {kind}");
        }
        let pod_status = d.message(d.by_name("api.core.v1.PodStatus").expect("PodStatus"));
        assert_eq!(pod_status.field(5).expect("hostIP").json, "hostIP");
    }
}
