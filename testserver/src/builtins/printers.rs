//! What every built-in's printer shares (printers.go's helpers): reading a field, the
//! `<none>` of an empty one, ages, container lists, selectors, and the columns most
//! tables have (Name, Age, the workloads' wide columns).

use serde_json::Value;

use crate::registry::{Cell, PrinterColumn};

/// A column (a `const fn`, so rows are data).
pub(crate) const fn col(
    name: &'static str,
    ty: &'static str,
    priority: u8,
    cell: Cell,
) -> PrinterColumn {
    PrinterColumn {
        name,
        ty,
        priority,
        cell,
    }
}

/// A computed string column shown by default.
pub(crate) const fn computed(name: &'static str, cell: fn(&Value) -> Value) -> PrinterColumn {
    col(name, "string", 0, Cell::Computed(cell))
}

/// `Name`.
pub(crate) const NAME: PrinterColumn = col("Name", "string", 0, Cell::Path(".metadata.name"));
/// `Age`.
pub(crate) const AGE: PrinterColumn = computed("Age", age);
/// `Created At` (the default convertor's second column).
pub(crate) const CREATED_AT: PrinterColumn = col(
    "Created At",
    "date",
    0,
    Cell::Path(".metadata.creationTimestamp"),
);
/// apiserver `pkg/registry/rest/table.go` `defaultTableConvertor`: the columns of a
/// built-in printers.go has no printer for.
pub(crate) const DEFAULT: &[PrinterColumn] = &[NAME, CREATED_AT];
/// A pod template's container names (`-o wide`).
pub(crate) const CONTAINERS: PrinterColumn = col(
    "Containers",
    "string",
    1,
    Cell::Computed(template_containers),
);
/// A pod template's images (`-o wide`).
pub(crate) const IMAGES: PrinterColumn =
    col("Images", "string", 1, Cell::Computed(template_images));
/// `spec.selector` (`-o wide`).
pub(crate) const SELECTOR: PrinterColumn = col("Selector", "string", 1, Cell::Computed(selector));

pub(crate) fn s<'a>(v: &'a Value, path: &str) -> &'a str {
    v.pointer(path).and_then(Value::as_str).unwrap_or_default()
}

pub(crate) fn n(v: &Value, path: &str) -> i64 {
    v.pointer(path).and_then(Value::as_i64).unwrap_or(0)
}

pub(crate) fn arr<'a>(v: &'a Value, path: &str) -> &'a [Value] {
    v.pointer(path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub(crate) fn none_if_empty(s: String) -> Value {
    Value::String(if s.is_empty() { "<none>".into() } else { s })
}

/// apimachinery `util/duration.HumanDuration`.
pub(crate) fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// printers.go `translateTimestampSince`: the age of an RFC 3339 timestamp.
pub(crate) fn since(ts: &str) -> String {
    match ts.parse::<jiff::Timestamp>() {
        Ok(t) => human_duration(crate::clock::now().as_second() - t.as_second()),
        Err(_) => "<unknown>".into(),
    }
}

pub(crate) fn age(obj: &Value) -> Value {
    Value::String(since(s(obj, "/metadata/creationTimestamp")))
}

pub(crate) fn name(obj: &Value) -> Value {
    Value::String(s(obj, "/metadata/name").to_string())
}

pub(crate) fn containers(obj: &Value, path: &str, field: &str) -> Value {
    let names: Vec<&str> = arr(obj, path)
        .iter()
        .map(|c| c.get(field).and_then(Value::as_str).unwrap_or_default())
        .collect();
    Value::String(names.join(","))
}

pub(crate) fn template_containers(obj: &Value) -> Value {
    containers(obj, "/spec/template/spec/containers", "name")
}

pub(crate) fn template_images(obj: &Value) -> Value {
    containers(obj, "/spec/template/spec/containers", "image")
}

pub(crate) fn selector(obj: &Value) -> Value {
    // metav1.FormatLabelSelector
    let sel = obj.pointer("/spec/selector");
    let mut parts: Vec<String> = Vec::new();
    if let Some(Value::Object(labels)) = sel.and_then(|s| s.get("matchLabels")) {
        for (k, v) in labels {
            parts.push(format!("{k}={}", v.as_str().unwrap_or_default()));
        }
    }
    for e in sel
        .and_then(|s| s.get("matchExpressions"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "In" => parts.push(format!("{key} in ({})", values.join(","))),
            "NotIn" => parts.push(format!("{key} notin ({})", values.join(","))),
            "Exists" => parts.push(key.to_string()),
            "DoesNotExist" => parts.push(format!("!{key}")),
            _ => {}
        }
    }
    if sel.is_none() {
        return Value::String("<none>".into());
    }
    none_if_empty(parts.join(","))
}

pub(crate) fn map_selector(obj: &Value, path: &str) -> Value {
    let parts: Vec<String> = obj
        .pointer(path)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    none_if_empty(parts.join(","))
}

/// `spec.replicas`, 1 when unset (the defaulter's value).
pub(crate) fn spec_replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_apimachinery() {
        for (secs, s) in [
            (5, "5s"),
            (119, "119s"),
            (150, "2m30s"),
            (600, "10m"),
            (3 * 3600 + 5 * 60, "3h5m"),
            (10 * 3600, "10h"),
            (3 * 86400 + 3600, "3d1h"),
            (30 * 86400, "30d"),
            (-5, "<invalid>"),
        ] {
            assert_eq!(human_duration(secs), s, "{secs}");
        }
    }
}
