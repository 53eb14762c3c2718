//! The Rust types an imported CRD version becomes, before they are rendered: structs,
//! string enums and newtypes, each with its description and the markers that carry its
//! schema's constraints back (`+kubebuilder:validation:...`, `+listType` ...).

/// The Rust type of a field, an array item or a map value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RustType {
    /// `String`.
    String,
    /// `bool`.
    Bool,
    /// `i32` (`format: int32`).
    I32,
    /// `i64` (`format: int64`, or no format).
    I64,
    /// `f32` (`format: float`).
    F32,
    /// `f64` (`format: double`, or no format).
    F64,
    /// k8s-openapi's `Time` (`format: date-time`).
    Time,
    /// k8s-openapi's `ByteString` (`format: byte`).
    ByteString,
    /// k8s-openapi's `IntOrString` (`x-kubernetes-int-or-string`).
    IntOrString,
    /// k8s-openapi's `ObjectMeta` (a resource's `metadata`).
    ObjectMeta,
    /// `serde_json::Value` (`x-kubernetes-preserve-unknown-fields`, or untyped).
    Json,
    /// `Vec<T>` (`type: array`).
    Vec(Box<RustType>),
    /// `BTreeMap<String, T>` (`additionalProperties`).
    Map(Box<RustType>),
    /// `Option<T>`: an array item or map value with `nullable: true` (serde writes
    /// `None` as `null` there).
    Option(Box<RustType>),
    /// A type of the module, by name.
    Named(String),
}

/// One field of a struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The Rust identifier (snake_case, never a keyword).
    pub rust_name: String,
    /// The JSON property name.
    pub json_name: String,
    /// The type, without the `Option` of an optional field.
    pub ty: RustType,
    /// Not in the schema's `required` list: `Option<T>`, skipped when `None`.
    pub optional: bool,
    /// `#[serde(flatten)]`: the map that keeps the unknown fields of an object with
    /// `x-kubernetes-preserve-unknown-fields`.
    pub flatten: bool,
    /// The property's description.
    pub doc: Option<String>,
    /// The property's constraints as markers (without the leading `+`).
    pub markers: Vec<String>,
}

/// One variant of a string enum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The Rust identifier.
    pub name: String,
    /// The JSON string.
    pub value: String,
}

/// What a type is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// A struct with named fields (`type: object` with `properties`).
    Struct(Vec<Field>),
    /// A unit-only enum (`type: string` with a string `enum`); `default` is the index
    /// of the `#[default]` variant.
    Enum {
        /// The variants, in the schema's order.
        variants: Vec<Variant>,
        /// The `#[default]` variant.
        default: usize,
    },
    /// A newtype (`struct T(pub U)`), which gives an array item or a map value its own
    /// description and constraints.
    Newtype(RustType),
}

/// One generated type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDef {
    /// The Rust name.
    pub name: String,
    /// The schema node's description.
    pub doc: Option<String>,
    /// Markers (without `+`): the resource markers of a kind, the constraints of an
    /// array item or map value type.
    pub markers: Vec<String>,
    /// The body.
    pub body: Body,
}

/// One version module: the types of every CRD of one group and version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Module {
    /// The API group.
    pub group: String,
    /// The version.
    pub version: String,
    /// The source CRDs' names (`<plural>.<group>`), for the module docs.
    pub crds: Vec<String>,
    /// The types, kinds first in input order, each followed by its nested types.
    pub types: Vec<TypeDef>,
}
