//! Protobuf <-> JSON for Kubernetes messages, driven by [`Descriptors`]: what the Go types'
//! generated `Marshal`/`Unmarshal` and their JSON tags do, for any message.
//!
//! Decoding keeps what the sender put on the wire, except empty strings: gogo-protobuf
//! writes every non-pointer string, and Go treats `""` like an absent field (defaulting
//! fills it), so an absent JSON field is the faithful translation. Zero numbers and
//! `false` are kept (they may be pointer fields set on purpose: `replicas: 0`).

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::{
    ProtoError,
    descriptors::{Card, Descriptors, Kind, Message, Special},
    wire::{self, Payload, Reader},
};

// ------------------------------------------------------------------ decoding

/// Decodes message `msg` from `bytes` into its JSON form.
pub fn decode(d: &Descriptors, msg: usize, bytes: &[u8]) -> Result<Value, ProtoError> {
    decode_depth(d, msg, bytes, 0)
}

const MAX_DEPTH: usize = 100;

fn decode_depth(
    d: &Descriptors,
    msg: usize,
    bytes: &[u8],
    depth: usize,
) -> Result<Value, ProtoError> {
    if depth > MAX_DEPTH {
        return Err(ProtoError::TooDeep);
    }
    let m = d.message(msg);
    if let Some(special) = m.special {
        return decode_special(d, m, special, bytes, depth);
    }
    let mut out = Map::new();
    let mut r = Reader::new(bytes);
    while let Some((tag, payload)) = r.field()? {
        let Some(f) = m.field(tag) else { continue };
        if f.inline() {
            if let (Kind::Message(i), Payload::Bytes(b)) = (f.kind, payload)
                && let Value::Object(inner) = decode_depth(d, i, b, depth + 1)?
            {
                out.extend(inner);
            }
            continue;
        }
        match f.card {
            Card::Optional => {
                if let Some(v) = scalar_or_message(d, f.kind, payload, depth)? {
                    out.insert(f.json.clone(), v);
                }
            }
            Card::Repeated => {
                let entry = out
                    .entry(f.json.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                let Value::Array(items) = entry else { continue };
                match (f.kind, payload) {
                    // packed scalars
                    (Kind::Int32 | Kind::Int64 | Kind::Bool, Payload::Bytes(b)) => {
                        let mut pr = Reader::new(b);
                        while pr.remaining() > 0 {
                            let v = pr.varint()?;
                            items.push(varint_value(f.kind, v));
                        }
                    }
                    (kind, payload) => {
                        let v = scalar_or_message(d, kind, payload, depth)?;
                        items.push(v.unwrap_or_else(|| zero(kind)));
                    }
                }
            }
            Card::Map => {
                let Payload::Bytes(entry) = payload else {
                    return Err(ProtoError::Mismatch(f.json.clone()));
                };
                let mut er = Reader::new(entry);
                let (mut key, mut value) = (String::new(), None);
                while let Some((t, p)) = er.field()? {
                    match (t, p) {
                        (1, Payload::Bytes(k)) => key = utf8(k)?,
                        (2, p) => value = scalar_or_message(d, f.kind, p, depth)?,
                        _ => {}
                    }
                }
                let map = out
                    .entry(f.json.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = map {
                    map.insert(key, value.unwrap_or_else(|| zero(f.kind)));
                }
            }
        }
    }
    Ok(Value::Object(out))
}

fn zero(kind: Kind) -> Value {
    match kind {
        Kind::String | Kind::Bytes => Value::String(String::new()),
        Kind::Bool => Value::Bool(false),
        Kind::Int32 | Kind::Int64 | Kind::Double => Value::from(0),
        Kind::Message(_) => Value::Object(Map::new()),
    }
}

fn utf8(b: &[u8]) -> Result<String, ProtoError> {
    String::from_utf8(b.to_vec()).map_err(|_| ProtoError::Utf8)
}

fn varint_value(kind: Kind, v: u64) -> Value {
    match kind {
        Kind::Bool => Value::Bool(v != 0),
        Kind::Int32 => Value::from(v as i64 as i32),
        _ => Value::from(v as i64),
    }
}

/// A single value; `None` when it is absent in JSON (an empty string, an empty time).
fn scalar_or_message(
    d: &Descriptors,
    kind: Kind,
    payload: Payload<'_>,
    depth: usize,
) -> Result<Option<Value>, ProtoError> {
    Ok(match (kind, payload) {
        (Kind::String, Payload::Bytes(b)) => {
            Some(utf8(b)?).filter(|s| !s.is_empty()).map(Value::String)
        }
        (Kind::Bytes, Payload::Bytes(b)) => Some(Value::String(
            base64::engine::general_purpose::STANDARD.encode(b),
        )),
        (Kind::Bool | Kind::Int32 | Kind::Int64, Payload::Varint(v)) => Some(varint_value(kind, v)),
        (Kind::Double, Payload::Fixed64(v)) => {
            Number::from_f64(f64::from_bits(v)).map(Value::Number)
        }
        (Kind::Message(i), Payload::Bytes(b)) => {
            let v = decode_depth(d, i, b, depth + 1)?;
            (!v.is_null()).then_some(v)
        }
        _ => return Err(ProtoError::Mismatch(format!("{kind:?}"))),
    })
}

fn fields_of<'a>(bytes: &'a [u8]) -> Result<Vec<(u32, Payload<'a>)>, ProtoError> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while let Some(f) = r.field()? {
        out.push(f);
    }
    Ok(out)
}

fn decode_special(
    d: &Descriptors,
    m: &Message,
    special: Special,
    bytes: &[u8],
    depth: usize,
) -> Result<Value, ProtoError> {
    let fields = fields_of(bytes)?;
    let int = |tag: u32| {
        fields.iter().rev().find_map(|(t, p)| match p {
            Payload::Varint(v) if *t == tag => Some(*v as i64),
            _ => None,
        })
    };
    let bytes_of = |tag: u32| {
        fields.iter().rev().find_map(|(t, p)| match p {
            Payload::Bytes(b) if *t == tag => Some(*b),
            _ => None,
        })
    };
    let message_field = |tag: u32| -> Result<Option<Value>, ProtoError> {
        let (Some(f), Some(b)) = (m.field(tag), bytes_of(tag)) else {
            return Ok(None);
        };
        match f.kind {
            Kind::Message(i) => Ok(Some(decode_depth(d, i, b, depth + 1)?)),
            _ => Ok(None),
        }
    };
    let strings = |tag: u32| -> Result<Vec<Value>, ProtoError> {
        fields
            .iter()
            .filter_map(|(t, p)| match p {
                Payload::Bytes(b) if *t == tag => Some(utf8(b).map(Value::String)),
                _ => None,
            })
            .collect()
    };
    Ok(match special {
        Special::Time | Special::MicroTime => {
            let (secs, nanos) = (int(1).unwrap_or(0), int(2).unwrap_or(0));
            if bytes.is_empty() {
                return Ok(Value::Null);
            }
            Value::String(format_time(secs, nanos, special == Special::MicroTime)?)
        }
        Special::Duration => Value::String(format_duration(int(1).unwrap_or(0))),
        Special::Quantity => Value::String(bytes_of(1).map(utf8).transpose()?.unwrap_or_default()),
        Special::IntOrString => {
            if int(1) == Some(1) {
                Value::String(bytes_of(3).map(utf8).transpose()?.unwrap_or_default())
            } else {
                Value::from(int(2).unwrap_or(0) as i32)
            }
        }
        Special::RawJson => match bytes_of(1) {
            None => Value::Null,
            Some([]) => Value::Null,
            Some(raw) => {
                serde_json::from_slice(raw).map_err(|e| ProtoError::RawJson(e.to_string()))?
            }
        },
        Special::SchemaOrArray => match message_field(1)? {
            Some(schema) => schema,
            None => {
                let mut items = Vec::new();
                if let Some(Kind::Message(i)) = m.field(2).map(|f| f.kind) {
                    for (t, p) in &fields {
                        if let (2, Payload::Bytes(b)) = (*t, p) {
                            items.push(decode_depth(d, i, b, depth + 1)?);
                        }
                    }
                }
                Value::Array(items)
            }
        },
        Special::SchemaOrBool => match message_field(2)? {
            Some(schema) => schema,
            None => Value::Bool(int(1).unwrap_or(0) != 0),
        },
        Special::SchemaOrStringArray => match message_field(1)? {
            Some(schema) => schema,
            None => Value::Array(strings(2)?),
        },
        Special::StringList => Value::Array(strings(1)?),
    })
}

fn format_time(secs: i64, nanos: i64, micro: bool) -> Result<String, ProtoError> {
    let ts = jiff::Timestamp::from_second(secs).map_err(|e| ProtoError::Time(e.to_string()))?;
    let base = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    Ok(if micro {
        format!("{base}.{:06}Z", nanos.clamp(0, 999_999_999) / 1000)
    } else {
        format!("{base}Z")
    })
}

/// Go's `time.Duration.String()`.
pub fn format_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let neg = nanos < 0;
    let n = nanos.unsigned_abs();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let frac = |v: u64, unit: u64| {
        let whole = v / unit;
        let rest = v % unit;
        if rest == 0 {
            whole.to_string()
        } else {
            let digits = unit.to_string().len() - 1;
            let s = format!("{whole}.{rest:0digits$}");
            s.trim_end_matches('0').to_string()
        }
    };
    if n < 1_000 {
        out.push_str(&format!("{n}ns"));
    } else if n < 1_000_000 {
        out.push_str(&format!("{}µs", frac(n, 1_000)));
    } else if n < 1_000_000_000 {
        out.push_str(&format!("{}ms", frac(n, 1_000_000)));
    } else {
        let secs_total = n / 1_000_000_000;
        let h = secs_total / 3600;
        let m = (secs_total % 3600) / 60;
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if h > 0 || m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&format!("{}s", frac(n % 60_000_000_000, 1_000_000_000)));
    }
    out
}

/// Parses a Go duration string (`1h2m3.5s`, `300ms`, `-1.5h`) into nanoseconds.
pub fn parse_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    let mut total: f64 = 0.0;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let mult = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += n * mult;
    }
    let v = total.round() as i64;
    Some(if neg { -v } else { v })
}

// ------------------------------------------------------------------ encoding

/// Encodes `value` (the JSON form) as message `msg`. JSON fields the message does not have
/// are dropped, as a Go client decoding JSON into the type would.
pub fn encode(d: &Descriptors, msg: usize, value: &Value) -> Result<Vec<u8>, ProtoError> {
    let mut out = Vec::new();
    encode_into(d, msg, value, &mut out, 0)?;
    Ok(out)
}

fn encode_into(
    d: &Descriptors,
    msg: usize,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), ProtoError> {
    if depth > MAX_DEPTH {
        return Err(ProtoError::TooDeep);
    }
    let m = d.message(msg);
    if let Some(special) = m.special {
        return encode_special(d, m, special, value, out, depth);
    }
    let Value::Object(obj) = value else {
        return Err(ProtoError::Mismatch(m.name.clone()));
    };
    for f in &m.fields {
        if f.inline() {
            encode_one(d, f.tag, f.kind, value, out, depth)?;
            continue;
        }
        let Some(v) = obj.get(&f.json) else { continue };
        if v.is_null() {
            continue;
        }
        match f.card {
            Card::Optional => encode_one(d, f.tag, f.kind, v, out, depth)?,
            Card::Repeated => {
                let Value::Array(items) = v else {
                    return Err(ProtoError::Mismatch(f.json.clone()));
                };
                for item in items {
                    encode_one(d, f.tag, f.kind, item, out, depth)?;
                }
            }
            Card::Map => {
                let Value::Object(map) = v else {
                    return Err(ProtoError::Mismatch(f.json.clone()));
                };
                for (k, item) in map {
                    let mut entry = Vec::new();
                    wire::put_bytes(&mut entry, 1, k.as_bytes());
                    if !item.is_null() {
                        encode_one(d, 2, f.kind, item, &mut entry, depth)?;
                    }
                    wire::put_bytes(out, f.tag, &entry);
                }
            }
        }
    }
    Ok(())
}

fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn encode_one(
    d: &Descriptors,
    tag: u32,
    kind: Kind,
    v: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), ProtoError> {
    let mismatch = || ProtoError::Mismatch(format!("field {tag}: {v}"));
    match kind {
        Kind::String => {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err(mismatch()),
            };
            wire::put_bytes(out, tag, s.as_bytes());
        }
        Kind::Bytes => {
            let s = v.as_str().ok_or_else(mismatch)?;
            let b = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| mismatch())?;
            wire::put_bytes(out, tag, &b);
        }
        Kind::Bool => {
            wire::put_key(out, tag, wire::VARINT);
            wire::put_varint(out, u64::from(v.as_bool().ok_or_else(mismatch)?));
        }
        Kind::Int32 | Kind::Int64 => {
            let n = as_i64(v).ok_or_else(mismatch)?;
            let n = if kind == Kind::Int32 {
                i64::from(n as i32)
            } else {
                n
            };
            wire::put_key(out, tag, wire::VARINT);
            wire::put_varint(out, n as u64);
        }
        Kind::Double => {
            let f = v.as_f64().ok_or_else(mismatch)?;
            wire::put_key(out, tag, wire::FIXED64);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Kind::Message(i) => {
            let mut inner = Vec::new();
            encode_into(d, i, v, &mut inner, depth + 1)?;
            wire::put_bytes(out, tag, &inner);
        }
    }
    Ok(())
}

fn encode_special(
    d: &Descriptors,
    m: &Message,
    special: Special,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), ProtoError> {
    let mismatch = || ProtoError::Mismatch(format!("{}: {value}", m.name));
    let sub = |tag: u32| match m.field(tag).map(|f| f.kind) {
        Some(k) => Ok(k),
        None => Err(ProtoError::Mismatch(m.name.clone())),
    };
    match special {
        Special::Time | Special::MicroTime => {
            let s = value.as_str().ok_or_else(mismatch)?;
            let ts: jiff::Timestamp = s.parse().map_err(|_| mismatch())?;
            let (secs, nanos) = (ts.as_second(), ts.subsec_nanosecond());
            wire::put_key(out, 1, wire::VARINT);
            wire::put_varint(out, secs as u64);
            if nanos != 0 {
                wire::put_key(out, 2, wire::VARINT);
                wire::put_varint(out, i64::from(nanos) as u64);
            }
        }
        Special::Duration => {
            let n = match value {
                Value::String(s) => parse_duration(s).ok_or_else(mismatch)?,
                other => as_i64(other).ok_or_else(mismatch)?,
            };
            wire::put_key(out, 1, wire::VARINT);
            wire::put_varint(out, n as u64);
        }
        Special::Quantity => encode_one(d, 1, Kind::String, value, out, depth)?,
        Special::IntOrString => match value {
            Value::String(s) => {
                wire::put_key(out, 1, wire::VARINT);
                wire::put_varint(out, 1);
                wire::put_bytes(out, 3, s.as_bytes());
            }
            other => {
                let n = as_i64(other).ok_or_else(mismatch)?;
                wire::put_key(out, 1, wire::VARINT);
                wire::put_varint(out, 0);
                wire::put_key(out, 2, wire::VARINT);
                wire::put_varint(out, i64::from(n as i32) as u64);
            }
        },
        Special::RawJson => {
            let raw = serde_json::to_vec(value).map_err(|e| ProtoError::RawJson(e.to_string()))?;
            wire::put_bytes(out, 1, &raw);
        }
        Special::SchemaOrArray => match value {
            Value::Array(items) => {
                for item in items {
                    encode_one(d, 2, sub(2)?, item, out, depth)?;
                }
            }
            other => encode_one(d, 1, sub(1)?, other, out, depth)?,
        },
        Special::SchemaOrBool => match value {
            Value::Bool(b) => encode_one(d, 1, Kind::Bool, &Value::Bool(*b), out, depth)?,
            other => {
                encode_one(d, 1, Kind::Bool, &Value::Bool(true), out, depth)?;
                encode_one(d, 2, sub(2)?, other, out, depth)?;
            }
        },
        Special::SchemaOrStringArray => match value {
            Value::Array(items) => {
                for item in items {
                    encode_one(d, 2, Kind::String, item, out, depth)?;
                }
            }
            other => encode_one(d, 1, sub(1)?, other, out, depth)?,
        },
        Special::StringList => {
            let Value::Array(items) = value else {
                return Err(mismatch());
            };
            for item in items {
                encode_one(d, 1, Kind::String, item, out, depth)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_format_and_parse_like_time_duration() {
        for (n, s) in [
            (0, "0s"),
            (1_500_000_000, "1.5s"),
            (3_723_000_000_000, "1h2m3s"),
            (300_000_000, "300ms"),
            (60_000_000_000, "1m0s"),
        ] {
            assert_eq!(format_duration(n), s);
            assert_eq!(parse_duration(s), Some(n));
        }
        assert_eq!(parse_duration("bogus"), None);
    }

    #[test]
    fn special_types_round_trip() {
        let d = Descriptors::get();
        let pod = d.for_kind("v1", "Pod").expect("Pod");
        let v = serde_json::json!({
            "metadata": {"name": "p", "creationTimestamp": "2024-01-02T03:04:05Z",
                         "labels": {"a": "b"}, "generation": 0},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                      "ports": [{"containerPort": 80}],
                      "resources": {"limits": {"cpu": "500m"}},
                      "livenessProbe": {"httpGet": {"port": "http", "path": "/"}}}],
                     "automountServiceAccountToken": false},
        });
        let bytes = encode(d, pod, &v).expect("encode");
        let back = decode(d, pod, &bytes).expect("decode");
        assert_eq!(back, v);
    }
}
