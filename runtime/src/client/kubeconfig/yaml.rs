//! The YAML reader behind [`Kubeconfig::from_yaml`](super::Kubeconfig::from_yaml).
//!
//! saphyr-parser's events are built into a small tree of [`Node`]s (every node knows its
//! line and column), and the kubeconfig types are deserialized from that tree by a serde
//! `Deserializer` driven by the target type, so
//!
//! - a field that client-go types as a string takes any scalar's text as written
//!   (`namespace: 0123` is `"0123"`, not 123; a quoted scalar is always text);
//! - untyped values (extensions) follow the YAML 1.2 core schema: `null`/`~`/empty,
//!   `true`/`false`, integers (also `0x…`, `0o…`), floats (also `.inf`, `.nan`), and every
//!   other plain scalar is a string;
//! - `null` where a list, map or string is expected reads as empty, as Go's zero value does;
//! - anchors and aliases work (an alias is a copy of its anchored node, with a cap on the
//!   total size so a "billion laughs" document is an error, not an out-of-memory);
//! - every error carries a line and column and never quotes a value: a kubeconfig holds
//!   tokens and keys, and a type error such as "expected a boolean" is enough to fix it.

use std::{collections::HashMap, fmt};

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use serde::de::{self, Error as _, IntoDeserializer as _};

/// Nodes (after alias expansion) one YAML stream may hold: far above any real kubeconfig
/// (one user is about a dozen nodes), far below what exhausts memory.
const MAX_NODES: usize = 1 << 20;

/// How deep sequences and mappings may nest (a kubeconfig needs about six levels); the
/// deserializer recurses per level, so this bounds its stack.
const MAX_DEPTH: usize = 128;

/// A position in the YAML text, both 1-based.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

impl Pos {
    fn of(span: &Span) -> Self {
        Pos {
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }
}

/// A parsed YAML node.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// A scalar: its text, and whether it is plain (unquoted, not a block scalar, no
    /// `!!str` tag), the only kind whose type is resolved from its text.
    Scalar {
        text: String,
        plain: bool,
        pos: Pos,
    },
    Seq {
        items: Vec<Node>,
        pos: Pos,
    },
    Map {
        entries: Vec<(Node, Node)>,
        pos: Pos,
    },
}

impl Node {
    fn pos(&self) -> Pos {
        match self {
            Node::Scalar { pos, .. } | Node::Seq { pos, .. } | Node::Map { pos, .. } => *pos,
        }
    }

    /// Nodes in this subtree, this one included.
    fn size(&self) -> usize {
        match self {
            Node::Scalar { .. } => 1,
            Node::Seq { items, .. } => 1 + items.iter().map(Node::size).sum::<usize>(),
            Node::Map { entries, .. } => {
                1 + entries
                    .iter()
                    .map(|(k, v)| k.size() + v.size())
                    .sum::<usize>()
            }
        }
    }

    /// True for a plain `null`, `~` or empty scalar.
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Node::Scalar { text, plain: true, .. } if is_null(text))
    }
}

/// Why YAML text could not be read, with where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub(crate) pos: Pos,
    pub(crate) message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.pos.line, self.pos.column, self.message
        )
    }
}

impl std::error::Error for YamlError {}

impl YamlError {
    fn new(pos: Pos, message: impl Into<String>) -> Self {
        YamlError {
            pos,
            message: message.into(),
        }
    }
}

/// A sequence or mapping under construction.
enum Frame {
    Seq {
        items: Vec<Node>,
        pos: Pos,
        anchor: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        pos: Pos,
        anchor: usize,
    },
}

/// Builds the documents of a YAML stream from the parser's events, without recursion.
#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    documents: Vec<Node>,
    nodes: usize,
}

impl Builder {
    fn count(&mut self, n: usize, pos: Pos) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(YamlError::new(
                pos,
                format!("more than {MAX_NODES} nodes (after expanding aliases)"),
            ));
        }
        Ok(())
    }

    fn open(&mut self, frame: Frame, pos: Pos) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError::new(
                pos,
                format!("nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.count(1, pos)?;
        self.stack.push(frame);
        Ok(())
    }

    /// A finished node: remembered under its anchor, then added to its parent (or, at the
    /// top, is a document).
    fn done(&mut self, node: Node, anchor: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.documents.push(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push((k, node)),
            },
        }
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        let pos = Pos::of(&span);
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.count(1, pos)?;
                let plain = style == ScalarStyle::Plain && !tag.as_deref().is_some_and(is_str_tag);
                let node = Node::Scalar {
                    text: text.into_owned(),
                    plain,
                    pos,
                };
                self.done(node, anchor);
            }
            Event::SequenceStart(anchor, _) => self.open(
                Frame::Seq {
                    items: Vec::new(),
                    pos,
                    anchor,
                },
                pos,
            )?,
            Event::MappingStart(anchor, _) => self.open(
                Frame::Map {
                    entries: Vec::new(),
                    key: None,
                    pos,
                    anchor,
                },
                pos,
            )?,
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Seq { items, pos, anchor }) => (Node::Seq { items, pos }, anchor),
                    Some(Frame::Map {
                        entries,
                        pos,
                        anchor,
                        ..
                    }) => (Node::Map { entries, pos }, anchor),
                    None => return Err(YamlError::new(pos, "unbalanced end of a collection")),
                };
                self.done(node, anchor);
            }
            Event::Alias(id) => {
                // An anchor whose node is still open (`&a [*a]`) is not in the map yet:
                // a recursive alias is an error rather than an endless copy.
                let node = self.anchors.get(&id).cloned().ok_or_else(|| {
                    YamlError::new(pos, "alias of an unknown or enclosing anchor")
                })?;
                self.count(node.size(), pos)?;
                self.done(node, 0);
            }
            Event::DocumentStart(_) => self.anchors.clear(),
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }
}

/// `!!str` (`tag:yaml.org,2002:str`) or the non-specific `!`: the scalar is text.
fn is_str_tag(tag: &Tag) -> bool {
    (tag.is_yaml_core_schema() && tag.suffix == "str")
        || (tag.handle.is_empty() && tag.suffix == "!")
}

/// The documents of a YAML stream (none for an empty or comment-only text).
pub(crate) fn parse(text: &str) -> Result<Vec<Node>, YamlError> {
    let mut builder = Builder::default();
    for event in Parser::new_from_str(text) {
        match event {
            Ok((event, span)) => builder.event(event, span)?,
            Err(e) => {
                let m = e.marker();
                return Err(YamlError::new(
                    Pos {
                        line: m.line(),
                        column: m.col() + 1,
                    },
                    e.info().to_string(),
                ));
            }
        }
    }
    Ok(builder.documents)
}

// ---------- YAML 1.2 core schema ----------

fn is_null(s: &str) -> bool {
    matches!(s, "" | "~" | "null" | "Null" | "NULL")
}

fn core_bool(s: &str) -> Option<bool> {
    match s {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A boolean field also takes YAML 1.1's spellings, as the Go YAML library behind kubectl
/// (sigs.k8s.io/yaml over go-yaml v2) does: `yes`, `no`, `on`, `off`.
fn lenient_bool(s: &str) -> Option<bool> {
    core_bool(s).or(match s {
        "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    })
}

fn all_digits(s: &str, radix: u32) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

/// A plain scalar's value under the core schema.
#[derive(Debug, PartialEq)]
enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str,
}

fn resolve(s: &str) -> Plain {
    if is_null(s) {
        return Plain::Null;
    }
    if let Some(b) = core_bool(s) {
        return Plain::Bool(b);
    }
    let (negative, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if all_digits(unsigned, 10) {
        if let Ok(i) = s.parse::<i64>() {
            return Plain::Int(i);
        }
        if !negative && let Ok(u) = unsigned.parse::<u64>() {
            return Plain::UInt(u);
        }
        return s.parse::<f64>().map_or(Plain::Str, Plain::Float);
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8)] {
        if let Some(digits) = s.strip_prefix(prefix)
            && all_digits(digits, radix)
        {
            return u64::from_str_radix(digits, radix).map_or(Plain::Str, |u| {
                i64::try_from(u).map_or(Plain::UInt(u), Plain::Int)
            });
        }
    }
    match unsigned {
        ".inf" | ".Inf" | ".INF" => {
            return Plain::Float(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        ".nan" | ".NaN" | ".NAN" if unsigned.len() == s.len() => return Plain::Float(f64::NAN),
        _ => {}
    }
    if is_core_float(unsigned) {
        return s.parse::<f64>().map_or(Plain::Str, Plain::Float);
    }
    Plain::Str
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` (the sign already stripped).
fn is_core_float(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => all_digits(frac, 10),
        Some((int, frac)) => all_digits(int, 10) && (frac.is_empty() || all_digits(frac, 10)),
        None => all_digits(mantissa, 10),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        all_digits(e, 10)
    });
    mantissa_ok && exponent_ok
}

// ---------- serde ----------

/// A deserialization error, at the innermost node it concerns.
#[derive(Debug)]
pub(crate) struct DeError {
    pub(crate) message: String,
    pub(crate) pos: Option<Pos>,
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

/// What kind of value was found, never the value itself.
fn kind(unexp: &de::Unexpected<'_>) -> &'static str {
    use de::Unexpected as U;
    match unexp {
        U::Bool(_) => "a boolean",
        U::Unsigned(_) | U::Signed(_) | U::Float(_) => "a number",
        U::Char(_) | U::Str(_) => "a string",
        U::Bytes(_) => "bytes",
        U::Unit | U::Option => "null",
        U::Seq => "a sequence",
        U::Map => "a mapping",
        _ => "a value of another type",
    }
}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            message: msg.to_string(),
            pos: None,
        }
    }

    fn invalid_type(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        Self::custom(format_args!("expected {exp}, found {}", kind(&unexp)))
    }

    fn invalid_value(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        Self::custom(format_args!("invalid {}, expected {exp}", kind(&unexp)))
    }
}

impl DeError {
    /// Sets the position unless an inner node already did.
    fn at(mut self, pos: Pos) -> Self {
        self.pos.get_or_insert(pos);
        self
    }
}

/// Deserializes `T` from a node.
pub(crate) fn from_node<'de, T: de::Deserialize<'de>>(node: &'de Node) -> Result<T, DeError> {
    T::deserialize(node)
}

struct SeqAccess<'de>(std::slice::Iter<'de, Node>);

impl<'de> de::SeqAccess<'de> for SeqAccess<'de> {
    type Error = DeError;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        self.0.next().map(|n| seed.deserialize(n)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct MapAccess<'de> {
    entries: std::slice::Iter<'de, (Node, Node)>,
    value: Option<&'de Node>,
}

impl<'de> de::MapAccess<'de> for MapAccess<'de> {
    type Error = DeError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some((k, v)) = self.entries.next() else {
            return Ok(None);
        };
        if !matches!(k, Node::Scalar { .. }) {
            return Err(DeError::custom("a mapping key must be a scalar").at(k.pos()));
        }
        self.value = Some(v);
        seed.deserialize(k).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some(v) => seed.deserialize(v),
            None => Err(DeError::custom("a mapping value without its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

fn empty_seq<'de>() -> SeqAccess<'de> {
    SeqAccess([].iter())
}

fn empty_map<'de>() -> MapAccess<'de> {
    MapAccess {
        entries: [].iter(),
        value: None,
    }
}

impl<'de> de::Deserializer<'de> for &'de Node {
    type Error = DeError;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let pos = self.pos();
        match self {
            Node::Scalar {
                text, plain: false, ..
            } => visitor.visit_borrowed_str(text),
            Node::Scalar { text, .. } => match resolve(text) {
                Plain::Null => visitor.visit_unit(),
                Plain::Bool(b) => visitor.visit_bool(b),
                Plain::Int(i) => visitor.visit_i64(i),
                Plain::UInt(u) => visitor.visit_u64(u),
                Plain::Float(f) => visitor.visit_f64(f),
                Plain::Str => visitor.visit_borrowed_str(text),
            },
            Node::Seq { items, .. } => visitor.visit_seq(SeqAccess(items.iter())),
            Node::Map { entries, .. } => visitor.visit_map(MapAccess {
                entries: entries.iter(),
                value: None,
            }),
        }
        .map_err(|e| e.at(pos))
    }

    fn deserialize_bool<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            Node::Scalar {
                text, plain: true, ..
            } => match lenient_bool(text) {
                Some(b) => visitor.visit_bool(b),
                None if is_null(text) => visitor.visit_bool(false),
                None => Err(de::Error::invalid_type(de::Unexpected::Str(text), &visitor)),
            },
            _ => return self.deserialize_any(visitor),
        }
        .map_err(|e: DeError| e.at(self.pos()))
    }

    fn deserialize_str<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self {
            // Go's zero value: `name: ~` is the empty string
            Node::Scalar { .. } if self.is_null() => visitor.visit_borrowed_str(""),
            Node::Scalar { text, .. } => visitor.visit_borrowed_str(text),
            _ => return self.deserialize_any(visitor),
        }
        .map_err(|e: DeError| e.at(self.pos()))
    }

    fn deserialize_string<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
        .map_err(|e| e.at(self.pos()))
    }

    fn deserialize_seq<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.is_null() {
            visitor.visit_seq(empty_seq()).map_err(|e| e.at(self.pos()))
        } else {
            self.deserialize_any(visitor)
        }
    }

    fn deserialize_map<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.is_null() {
            visitor.visit_map(empty_map()).map_err(|e| e.at(self.pos()))
        } else {
            self.deserialize_any(visitor)
        }
    }

    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        // a mapping only: serde's derived structs would also take a sequence, by position
        match self {
            Node::Map { .. } => self.deserialize_any(visitor),
            _ if self.is_null() => visitor.visit_map(empty_map()),
            Node::Seq { .. } => Err(de::Error::invalid_type(de::Unexpected::Seq, &visitor)),
            Node::Scalar { .. } => Err(de::Error::invalid_type(de::Unexpected::Str(""), &visitor)),
        }
        .map_err(|e: DeError| e.at(self.pos()))
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self {
            Node::Scalar { text, .. } => visitor.visit_enum(text.as_str().into_deserializer()),
            _ => return self.deserialize_any(visitor),
        }
        .map_err(|e: DeError| e.at(self.pos()))
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor
            .visit_newtype_struct(self)
            .map_err(|e| e.at(self.pos()))
    }

    fn deserialize_ignored_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit unit_struct
        tuple tuple_struct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn value(yaml: &str) -> Value {
        let docs = parse(yaml).unwrap();
        from_node(&docs[0]).unwrap()
    }

    #[test]
    fn core_schema_scalars() {
        // YAML 1.2.2, 10.3.2 "Tag Resolution" of the core schema
        let v = value(
            "a: ~\nb: null\nc:\nd: true\ne: False\nf: 12\ng: -3\nh: 0x1F\ni: 0o17\nj: 1.5\n\
             k: .5\nl: 1e3\nm: -.inf\nn: .nan\no: 012\np: yes\nq: 1.2.3\nr: 0x\ns: 99999999999999999999\n",
        );
        assert_eq!(v["a"], Value::Null);
        assert_eq!(v["b"], Value::Null);
        assert_eq!(v["c"], Value::Null);
        assert_eq!(v["d"], json!(true));
        assert_eq!(v["e"], json!(false));
        assert_eq!(v["f"], json!(12));
        assert_eq!(v["g"], json!(-3));
        assert_eq!(v["h"], json!(31));
        assert_eq!(v["i"], json!(15));
        assert_eq!(v["j"], json!(1.5));
        assert_eq!(v["k"], json!(0.5));
        assert_eq!(v["l"], json!(1000.0));
        assert_eq!(v["m"], Value::Null, "JSON has no infinity");
        assert_eq!(v["n"], Value::Null, "JSON has no NaN");
        assert_eq!(
            v["o"],
            json!(12),
            "1.2 core: a leading zero is still decimal"
        );
        assert_eq!(v["p"], json!("yes"), "1.2 core: `yes` is a string");
        assert_eq!(v["q"], json!("1.2.3"));
        assert_eq!(v["r"], json!("0x"));
        assert_eq!(v["s"], json!(1e20));
    }

    #[test]
    fn quoted_block_and_str_tagged_scalars_stay_strings() {
        let v = value("a: \"true\"\nb: '12'\nc: !!str 0x10\nd: |\n  null\ne: >-\n  3\nf: ! 5\n");
        assert_eq!(v["a"], json!("true"));
        assert_eq!(v["b"], json!("12"));
        assert_eq!(v["c"], json!("0x10"));
        assert_eq!(v["d"], json!("null\n"));
        assert_eq!(v["e"], json!("3"));
        assert_eq!(v["f"], json!("5"));
    }

    #[test]
    fn anchors_and_aliases_are_copies() {
        let v = value("base: &b {x: 1, y: [a, b]}\ncopy: *b\nlist: [*b, *b]\n");
        assert_eq!(v["copy"], json!({"x": 1, "y": ["a", "b"]}));
        assert_eq!(v["list"][1]["y"][1], json!("b"));
    }

    #[test]
    fn alias_bombs_and_deep_nesting_are_errors_not_crashes() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let refs = vec![format!("*{}", (b'a' + i - 1) as char); 10].join(", ");
            bomb.push_str(&format!(
                "{}: &{} [{refs}]\n",
                (b'a' + i) as char,
                (b'a' + i) as char
            ));
        }
        let err = parse(&bomb).unwrap_err();
        assert!(err.message.contains("nodes"), "{err}");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let err = parse(&deep).unwrap_err();
        assert!(err.message.contains("nested"), "{err}");
        // deeper still, the parser's own limit answers first
        assert!(parse(&"[".repeat(100_000)).is_err());
        let err = parse("a: &a [*a]\n").unwrap_err();
        assert!(err.message.contains("alias"), "{err}");
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let err = parse("a: b\nc: {d: e\n").unwrap_err();
        assert_eq!(err.pos.line, 3, "{err}");
        let err = parse("a:\n  - b\n c: d\n").unwrap_err();
        assert_eq!(err.pos.line, 3, "{err}");
    }

    #[test]
    fn type_errors_have_a_position_and_no_value() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct T {
            flag: bool,
        }
        let docs = parse("# c\nflag: s3cr3t\n").unwrap();
        let err = from_node::<T>(&docs[0]).unwrap_err();
        assert_eq!(err.pos, Some(Pos { line: 2, column: 7 }));
        assert!(!err.message.contains("s3cr3t"), "{}", err.message);
        assert!(err.message.contains("boolean"), "{}", err.message);
    }

    #[test]
    fn multiple_documents_and_empty_streams() {
        assert!(parse("").unwrap().is_empty());
        assert!(parse("# only a comment\n").unwrap().is_empty());
        assert_eq!(parse("a: 1\n---\nb: 2\n").unwrap().len(), 2);
        assert!(parse("---\n").unwrap()[0].is_null());
    }
}
