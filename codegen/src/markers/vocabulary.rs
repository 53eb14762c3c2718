//! The marker vocabulary: the one table of every marker this generator knows (the shape
//! of serde_derive's `internals/symbol.rs` and client-gen's `supportedTags` in
//! `cmd/client-gen/generators/util/tags.go`).
//!
//! Each entry names the marker key as written in a doc comment, how its value is read
//! ([`ValueKind`]), where it may appear ([`Place`]) and its `#[resource(...)]`
//! spellings. The table alone drives key recognition, the attribute mapping, the
//! "did you mean" suggestions, duplicate and placement checks; code that gives a marker
//! its meaning refers to it by its constant ([`GENCLIENT`], [`GROUP_NAME`] ...). Adding a
//! marker is one line in [`vocabulary!`](self) below.

use std::fmt;

/// How a marker's value is written and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// client-gen's `+genclient`: no value; `+genclient=x` is the retired form and an
    /// error with client-gen's message.
    GenClient,
    /// A switch without a value (`+genclient:noStatus`); repeating it changes nothing.
    Flag,
    /// A required, non-empty value (`+resourceName=foos`); at most once.
    Str,
    /// A required value that may be empty (`+groupName=` is the core group); at most once.
    StrOrEmpty,
    /// `true` or `false`; at most once.
    Bool,
    /// A comma-separated verb list; every occurrence adds to the list.
    Verbs,
    /// `Name,verb=v[,subresource=s][,input=T][,result=T]`; one extension method each.
    Method,
    /// `package`, `true` or `false` (`+k8s:deepcopy-gen`); at most once.
    DeepCopyGen,
    /// Accepted with any value and otherwise ignored (or only checked for presence).
    Any,
    /// A number (`+kubebuilder:validation:Minimum=1`, `=0.5`, `=-3`); at most once.
    Number,
    /// A non-negative integer (`+kubebuilder:validation:MaxLength=63`); at most once.
    Count,
    /// Any non-empty text, kept verbatim (`+kubebuilder:validation:Pattern=^a,b$`); at
    /// most once.
    Text,
    /// controller-gen's value syntax, read as JSON: a JSON literal or a bare string
    /// (`+kubebuilder:default=3`, `={a: 1}` is not accepted, `="x"`, `=x`); at most once.
    Json,
    /// A `;`-separated list of values (`+kubebuilder:validation:Enum=a;b;c`), each read
    /// as [`ValueKind::Json`]; at most once.
    JsonList,
    /// A required, non-empty value; every occurrence adds one (`+listMapKey=type`).
    Strings,
    /// Comma-separated `key=value` arguments, values optionally double-quoted
    /// (`+kubebuilder:printcolumn:name="Ready",type=string,JSONPath=...`); every
    /// occurrence counts (the keys a marker accepts are checked by its reader).
    Args,
    /// [`ValueKind::Args`] that may also be written bare (`+kubebuilder:deprecatedversion`
    /// or `+kubebuilder:deprecatedversion:warning="..."`): no value is no arguments.
    OptArgs,
    /// A retired spelling of the named marker: with a value it is an error pointing at
    /// the new one (client-gen's rule); without, it is not a marker of this generator.
    Renamed(&'static str),
}

impl ValueKind {
    /// Whether a second occurrence on one item is an error.
    pub fn once(self) -> bool {
        matches!(
            self,
            ValueKind::Str
                | ValueKind::StrOrEmpty
                | ValueKind::Bool
                | ValueKind::DeepCopyGen
                | ValueKind::Number
                | ValueKind::Count
                | ValueKind::Text
                | ValueKind::Json
                | ValueKind::JsonList
        )
    }
}

/// Where a marker may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// On a type (doc comment or `#[resource(...)]`).
    Type,
    /// In a version module's mod.rs (`//! +groupName=...`).
    Package,
    /// Either.
    Either,
    /// On any item, field or module: markers another generator reads from every comment
    /// of the sources (`+kubebuilder:webhook`), checked here only for their syntax.
    Anywhere,
    /// On a struct field, or on a type whose schema it then constrains wherever the type
    /// is used (controller-gen's validation markers).
    Field,
}

impl Place {
    /// Whether a marker declared for `self` may appear at `at` (`Type` or `Package`).
    pub fn allows(self, at: Place) -> bool {
        self == at
            || self == Place::Anywhere
            || (self == Place::Either && at != Place::Field)
            || (self == Place::Field && at == Place::Type)
    }
}

/// One marker of the vocabulary (usable as a `match` pattern: `GENCLIENT => ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    /// The key as written after `+` (`genclient:onlyVerbs`).
    pub key: &'static str,
    /// How its value is read.
    pub kind: ValueKind,
    /// Where it may appear.
    pub place: Place,
    /// Its `#[resource(...)]` keys (empty: doc comments only).
    pub attrs: &'static [&'static str],
}

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "+{}", self.key)
    }
}

/// Declares the vocabulary: one `NAME: "key", kind, place, [attribute keys];` line per
/// marker becomes a documented constant and an entry of [`ALL`].
macro_rules! vocabulary {
    ($($name:ident: $key:literal, $kind:expr, $place:ident, [$($attr:literal),*];)*) => {
        $(
            #[doc = concat!("`+", $key, "`")]
            pub const $name: Marker = Marker {
                key: $key,
                kind: $kind,
                place: Place::$place,
                attrs: &[$($attr),*],
            };
        )*
        /// Every marker of the vocabulary, in table order.
        pub const ALL: &[Marker] = &[$($name),*];
    };
}

use ValueKind::{
    Any, Args, Bool, Count, DeepCopyGen, Flag, GenClient, Json, JsonList, Method, Number, OptArgs,
    Renamed, Str, StrOrEmpty, Strings, Text, Verbs,
};

vocabulary! {
    // name               marker key                                 value        where    #[resource(...)] keys
    GENCLIENT:            "genclient",                               GenClient,   Type,    ["genclient"];
    NON_NAMESPACED:       "genclient:nonNamespaced",                 Flag,        Type,    ["non_namespaced", "nonNamespaced"];
    NO_STATUS:            "genclient:noStatus",                      Flag,        Type,    ["no_status", "noStatus"];
    NO_VERBS:             "genclient:noVerbs",                       Flag,        Type,    ["no_verbs", "noVerbs"];
    READONLY:             "genclient:readonly",                      Flag,        Type,    ["readonly"];
    ONLY_VERBS:           "genclient:onlyVerbs",                     Verbs,       Type,    ["only_verbs", "onlyVerbs"];
    SKIP_VERBS:           "genclient:skipVerbs",                     Verbs,       Type,    ["skip_verbs", "skipVerbs"];
    METHOD:               "genclient:method",                        Method,      Type,    ["method"];
    GROUP_NAME:           "groupName",                               StrOrEmpty,  Either,  ["group"];
    GROUP_GO_NAME:        "groupGoName",                             Str,         Either,  ["group_go_name", "groupGoName"];
    RESOURCE_NAME:        "resourceName",                            Str,         Type,    ["plural"];
    DEEPCOPY_GEN:         "k8s:deepcopy-gen",                        DeepCopyGen, Either,  ["deepcopy"];
    DEEPCOPY_INTERFACES:  "k8s:deepcopy-gen:interfaces",             Any,         Type,    [];
    DEEPCOPY_NONPOINTER:  "k8s:deepcopy-gen:nonpointer-interfaces",  Any,         Type,    [];
    VERSION:              "kubegen:version",                         Str,         Type,    ["version"];
    KIND:                 "kubegen:kind",                            Str,         Type,    ["kind"];
    NAMESPACED:           "kubegen:namespaced",                      Flag,        Type,    ["namespaced"];
    RESOURCE_IMPL:        "kubegen:resourceImpl",                    Bool,        Type,    ["resource_impl", "resourceImpl"];
    INHERIT:              "kubegen:inherit",                         Any,         Type,    ["inherit"];
    // How many levels of a recursive type its CRD schema describes before the cut.
    MAX_DEPTH:            "kubegen:maxDepth",                        Count,       Type,    [];
    OLD_NON_NAMESPACED:   "nonNamespaced",                           Renamed(NON_NAMESPACED.key), Type, [];
    OLD_READONLY:         "readonly",                                Renamed(READONLY.key), Type, [];
    // controller-gen's CRD markers (sigs.k8s.io/controller-tools pkg/crd/markers).
    OBJECT_ROOT:          "kubebuilder:object:root",                 Any,         Type,    [];
    SUBRESOURCE_STATUS:   "kubebuilder:subresource:status",          Flag,        Type,    [];
    SUBRESOURCE_SCALE:    "kubebuilder:subresource:scale",           Args,        Type,    [];
    SELECTABLE_FIELD:     "kubebuilder:selectablefield",             Args,        Type,    [];
    STORAGE_VERSION:      "kubebuilder:storageversion",              Flag,        Type,    [];
    DEPRECATED_VERSION:   "kubebuilder:deprecatedversion",           OptArgs,     Type,    [];
    UNSERVED_VERSION:     "kubebuilder:unservedversion",             Flag,        Type,    [];
    METADATA_ANNOTATIONS: "kubebuilder:metadata:annotations",        Strings,     Type,    [];
    METADATA_LABELS:      "kubebuilder:metadata:labels",             Strings,     Type,    [];
    RESOURCE:             "kubebuilder:resource",                    Args,        Type,    [];
    PRINT_COLUMN:         "kubebuilder:printcolumn",                 Args,        Type,    [];
    MINIMUM:              "kubebuilder:validation:Minimum",          Number,      Field,   [];
    MAXIMUM:              "kubebuilder:validation:Maximum",          Number,      Field,   [];
    EXCLUSIVE_MINIMUM:    "kubebuilder:validation:ExclusiveMinimum", Bool,        Field,   [];
    EXCLUSIVE_MAXIMUM:    "kubebuilder:validation:ExclusiveMaximum", Bool,        Field,   [];
    MULTIPLE_OF:          "kubebuilder:validation:MultipleOf",       Number,      Field,   [];
    MIN_LENGTH:           "kubebuilder:validation:MinLength",        Count,       Field,   [];
    MAX_LENGTH:           "kubebuilder:validation:MaxLength",        Count,       Field,   [];
    PATTERN:              "kubebuilder:validation:Pattern",          Text,        Field,   [];
    ENUM:                 "kubebuilder:validation:Enum",             JsonList,    Field,   [];
    FORMAT:               "kubebuilder:validation:Format",           Text,        Field,   [];
    MIN_ITEMS:            "kubebuilder:validation:MinItems",         Count,       Field,   [];
    MAX_ITEMS:            "kubebuilder:validation:MaxItems",         Count,       Field,   [];
    UNIQUE_ITEMS:         "kubebuilder:validation:UniqueItems",      Bool,        Field,   [];
    MIN_PROPERTIES:       "kubebuilder:validation:MinProperties",    Count,       Field,   [];
    MAX_PROPERTIES:       "kubebuilder:validation:MaxProperties",    Count,       Field,   [];
    VALIDATION_REQUIRED:  "kubebuilder:validation:Required",         Flag,        Field,   [];
    VALIDATION_OPTIONAL:  "kubebuilder:validation:Optional",         Flag,        Field,   [];
    X_VALIDATION:         "kubebuilder:validation:XValidation",      Args,        Field,   [];
    DEFAULT:              "kubebuilder:default",                     Json,        Field,   [];
    PRESERVE_UNKNOWN:     "kubebuilder:pruning:PreserveUnknownFields", Flag,      Field,   [];
    EMBEDDED_RESOURCE:    "kubebuilder:validation:EmbeddedResource", Flag,        Field,   [];
    X_INT_OR_STRING:      "kubebuilder:validation:XIntOrString",     Flag,        Field,   [];
    SCHEMALESS:           "kubebuilder:validation:Schemaless",       Flag,        Field,   [];
    MAP_TYPE:             "mapType",                                 Str,         Field,   [];
    OPTIONAL:             "optional",                                Flag,        Field,   [];
    REQUIRED:             "required",                                Flag,        Field,   [];
    LIST_TYPE:            "listType",                                Str,         Field,   [];
    LIST_MAP_KEY:         "listMapKey",                              Strings,     Field,   [];
    // controller-gen's RBAC marker (pkg/rbac/parser.go), read crate-wide by `rbac`.
    RBAC:                 "kubebuilder:rbac",                        Args,        Either,  [];
    // controller-gen's webhook marker (pkg/webhook/parser.go), read crate-wide by `webhook`.
    WEBHOOK:              "kubebuilder:webhook",                     Args,        Anywhere, [];
    // A multi-version CRD converts through the operator's conversion webhook (kubegen's
    // marker on the kind: kubebuilder writes a CRD patch instead).
    CONVERSION_WEBHOOK:   "kubebuilder:webhook:conversion",          Flag,        Type,    [];
}

/// Key prefixes this generator owns: an unknown key under one of them is an error
/// (client-gen rejects unknown `genclient` tags the same way). Markers of other tools
/// (`+optional`, `+k8s:openapi-gen`, `+kubebuilder:...`) pass through.
/// Of controller-gen's namespace, the parts whose markers this generator gives a
/// meaning (`kubebuilder:validation:`, `kubebuilder:printcolumn`, `kubebuilder:rbac` ...)
/// are owned; the rest (`+kubebuilder:scaffold`, `+kubebuilder:object:generate`) passes through.
pub const OWNED_PREFIXES: &[&str] = &[
    "genclient",
    "k8s:deepcopy-gen",
    "kubegen:",
    "kubebuilder:object:root",
    "kubebuilder:validation:",
    "kubebuilder:printcolumn",
    "kubebuilder:subresource:",
    "kubebuilder:selectablefield",
    "kubebuilder:storageversion",
    "kubebuilder:pruning:",
    "kubebuilder:resource",
    "kubebuilder:default",
    "kubebuilder:deprecatedversion",
    "kubebuilder:unservedversion",
    "kubebuilder:metadata:",
    "kubebuilder:rbac",
    "kubebuilder:webhook",
];

/// The marker with doc-comment key `key`.
pub fn by_key(key: &str) -> Option<Marker> {
    ALL.iter().copied().find(|m| m.key == key)
}

/// The marker with `#[resource(...)]` key `attr`.
pub fn by_attr(attr: &str) -> Option<Marker> {
    ALL.iter().copied().find(|m| m.attrs.contains(&attr))
}

/// Whether an unknown `key` falls in a namespace this generator owns.
pub fn is_owned(key: &str) -> bool {
    OWNED_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// The known marker key closest to `key` (one or two edits away), for "did you mean".
pub fn suggest_key(key: &str) -> Option<&'static str> {
    closest(
        key,
        ALL.iter()
            .filter(|m| !matches!(m.kind, ValueKind::Renamed(_)))
            .map(|m| m.key),
    )
}

/// The `#[resource(...)]` key closest to `attr`, for "did you mean".
pub fn suggest_attr(attr: &str) -> Option<&'static str> {
    closest(attr, ALL.iter().flat_map(|m| m.attrs.iter().copied()))
}

fn closest(written: &str, known: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    let written = written.to_lowercase();
    known
        .map(|k| (levenshtein(&written, &k.to_lowercase()), k))
        .filter(|(d, k)| *d <= 2 && *d < k.len() / 2 + 1)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn keys_and_attribute_keys_are_unique() {
        let keys: BTreeSet<&str> = ALL.iter().map(|m| m.key).collect();
        assert_eq!(keys.len(), ALL.len());
        let attrs: Vec<&str> = ALL.iter().flat_map(|m| m.attrs.iter().copied()).collect();
        let unique: BTreeSet<&str> = attrs.iter().copied().collect();
        assert_eq!(unique.len(), attrs.len(), "{attrs:?}");
    }

    #[test]
    fn attribute_keys_are_identifiers() {
        for m in ALL {
            for a in m.attrs {
                assert!(syn::parse_str::<syn::Ident>(a).is_ok(), "{a}");
            }
        }
    }

    #[test]
    fn renamed_markers_point_at_markers_of_the_table() {
        for m in ALL {
            if let ValueKind::Renamed(new) = m.kind {
                assert!(by_key(new).is_some(), "{} -> {new}", m.key);
                assert!(m.attrs.is_empty());
            }
        }
    }

    #[test]
    fn every_namespaced_key_is_owned_so_its_typos_are_errors() {
        for m in ALL.iter().filter(|m| m.key.contains(':')) {
            if matches!(m.kind, ValueKind::Renamed(_)) {
                continue;
            }
            assert!(is_owned(m.key), "{}", m.key);
        }
        assert!(!is_owned("k8s:openapi-gen"));
        assert!(is_owned("kubebuilder:validation:Minimun"));
        assert!(is_owned("kubebuilder:rbac:gruops"));
        assert!(is_owned("kubebuilder:webhook:path"));
        assert!(!is_owned("kubebuilder:scaffold:imports"));
    }

    #[test]
    fn webhook_markers_may_sit_anywhere_and_the_conversion_marker_on_a_type() {
        for at in [Place::Type, Place::Package, Place::Field] {
            assert!(WEBHOOK.place.allows(at), "{at:?}");
        }
        assert!(CONVERSION_WEBHOOK.place.allows(Place::Type));
        assert!(!CONVERSION_WEBHOOK.place.allows(Place::Package));
    }

    #[test]
    fn lookups_and_suggestions_come_from_the_table() {
        assert_eq!(by_key("genclient:noStatus"), Some(NO_STATUS));
        assert_eq!(by_attr("no_status"), Some(NO_STATUS));
        assert_eq!(by_attr("noStatus"), Some(NO_STATUS));
        assert_eq!(by_attr("plural"), Some(RESOURCE_NAME));
        assert_eq!(by_attr("shortname"), None);
        assert_eq!(
            suggest_key("genclient:nostatus"),
            Some("genclient:noStatus")
        );
        assert_eq!(suggest_key("genclinet"), Some("genclient"));
        // Retired spellings are recognised but never suggested.
        assert_eq!(suggest_key("readonl"), None);
        assert_eq!(suggest_attr("gruop"), Some("group"));
        assert_eq!(suggest_attr("shortname"), None);
        assert_eq!(NO_STATUS.to_string(), "+genclient:noStatus");
    }
}
