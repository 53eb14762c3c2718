//! `meta.k8s.io` Tables (API Concepts, "Receiving resources as Tables"): kubectl's default
//! columns for the common built-in kinds as kube-apiserver's
//! `pkg/printers/internalversion/printers.go` prints them, custom resources' columns from
//! their CRD's `additionalPrinterColumns` (apiextensions-apiserver
//! `pkg/registry/customresource/tableconvertor`, JSONPath cells typed by
//! `cellForJSONValue`), and the default convertor's Name / Created At otherwise
//! (apiserver `pkg/registry/rest/table.go`).

use serde_json::{Map, Value, json};

use super::jsonpath;
use crate::{
    engine::{Engine, ListResult},
    registry::ResourceType,
};

/// `includeObject` (metav1.IncludeObjectPolicy): what each row carries besides its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// Nothing.
    None,
    /// The whole object.
    Object,
    /// Its PartialObjectMetadata (the default).
    #[default]
    Metadata,
}

impl IncludeObject {
    /// Parses the query parameter (absent or empty: Metadata).
    pub fn parse(s: Option<&str>) -> Result<Self, String> {
        match s.unwrap_or_default() {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "Object" => Ok(IncludeObject::Object),
            "None" => Ok(IncludeObject::None),
            other => Err(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
            )),
        }
    }
}

/// A column: name, type, format, priority (0: default, 1: `-o wide`) and the cell function.
struct Column {
    name: &'static str,
    ty: &'static str,
    format: &'static str,
    priority: u8,
    description: &'static str,
    cell: fn(&Value) -> Value,
}

/// The columns of one table: the built-in ones or a CRD's.
enum Columns {
    Builtin(Vec<Column>),
    Custom(Vec<CustomColumn>),
}

/// A CRD's additionalPrinterColumn.
struct CustomColumn {
    name: String,
    ty: String,
    format: String,
    description: String,
    priority: i64,
    path: String,
}

// ---------------------------------------------------------------- cell helpers

fn s<'a>(v: &'a Value, path: &str) -> &'a str {
    v.pointer(path).and_then(Value::as_str).unwrap_or_default()
}

fn n(v: &Value, path: &str) -> i64 {
    v.pointer(path).and_then(Value::as_i64).unwrap_or(0)
}

fn arr<'a>(v: &'a Value, path: &str) -> &'a [Value] {
    v.pointer(path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn none_if_empty(s: String) -> Value {
    Value::String(if s.is_empty() { "<none>".into() } else { s })
}

/// apimachinery `util/duration.HumanDuration`.
pub fn human_duration(secs: i64) -> String {
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
fn since(ts: &str) -> String {
    match ts.parse::<jiff::Timestamp>() {
        Ok(t) => human_duration(jiff::Timestamp::now().as_second() - t.as_second()),
        Err(_) => "<unknown>".into(),
    }
}

fn age(obj: &Value) -> Value {
    Value::String(since(s(obj, "/metadata/creationTimestamp")))
}

fn name(obj: &Value) -> Value {
    Value::String(s(obj, "/metadata/name").to_string())
}

fn created_at(obj: &Value) -> Value {
    Value::String(s(obj, "/metadata/creationTimestamp").to_string())
}

fn containers(obj: &Value, path: &str, field: &str) -> Value {
    let names: Vec<&str> = arr(obj, path)
        .iter()
        .map(|c| c.get(field).and_then(Value::as_str).unwrap_or_default())
        .collect();
    Value::String(names.join(","))
}

fn template_containers(obj: &Value) -> Value {
    containers(obj, "/spec/template/spec/containers", "name")
}

fn template_images(obj: &Value) -> Value {
    containers(obj, "/spec/template/spec/containers", "image")
}

fn selector(obj: &Value) -> Value {
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

fn map_selector(obj: &Value, path: &str) -> Value {
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

// ---------------------------------------------------------------- per kind

fn pod_ready(p: &Value) -> Value {
    let total = arr(p, "/spec/containers").len();
    let ready = arr(p, "/status/containerStatuses")
        .iter()
        .filter(|c| c.get("ready").and_then(Value::as_bool) == Some(true))
        .count();
    Value::String(format!("{ready}/{total}"))
}

fn pod_status(p: &Value) -> Value {
    let mut reason = s(p, "/status/phase").to_string();
    if !s(p, "/status/reason").is_empty() {
        reason = s(p, "/status/reason").to_string();
    }
    for c in arr(p, "/status/containerStatuses") {
        if let Some(r) = c.pointer("/state/waiting/reason").and_then(Value::as_str) {
            reason = r.to_string();
        } else if let Some(r) = c
            .pointer("/state/terminated/reason")
            .and_then(Value::as_str)
        {
            reason = r.to_string();
        }
    }
    if p.pointer("/metadata/deletionTimestamp").is_some() {
        reason = if s(p, "/status/reason") == "NodeLost" {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    if reason.is_empty() {
        reason = "Pending".into();
    }
    Value::String(reason)
}

fn pod_restarts(p: &Value) -> Value {
    let total: i64 = arr(p, "/status/containerStatuses")
        .iter()
        .map(|c| c.get("restartCount").and_then(Value::as_i64).unwrap_or(0))
        .sum();
    Value::from(total)
}

fn pod_ip(p: &Value) -> Value {
    none_if_empty(s(p, "/status/podIP").to_string())
}

fn pod_node(p: &Value) -> Value {
    none_if_empty(s(p, "/spec/nodeName").to_string())
}

fn pod_nominated(p: &Value) -> Value {
    none_if_empty(s(p, "/status/nominatedNodeName").to_string())
}

fn pod_gates(p: &Value) -> Value {
    let gates = arr(p, "/spec/readinessGates");
    if gates.is_empty() {
        return Value::String("<none>".into());
    }
    let ready = gates
        .iter()
        .filter(|g| {
            let t = g.get("conditionType").and_then(Value::as_str);
            arr(p, "/status/conditions").iter().any(|c| {
                c.get("type").and_then(Value::as_str) == t
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
        .count();
    Value::String(format!("{ready}/{}", gates.len()))
}

fn spec_replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn deploy_ready(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        n(o, "/status/readyReplicas"),
        spec_replicas(o)
    ))
}

fn updated(o: &Value) -> Value {
    Value::from(n(o, "/status/updatedReplicas"))
}

fn available(o: &Value) -> Value {
    Value::from(n(o, "/status/availableReplicas"))
}

fn desired(o: &Value) -> Value {
    Value::from(spec_replicas(o))
}

fn current(o: &Value) -> Value {
    Value::from(n(o, "/status/replicas"))
}

fn ready_replicas(o: &Value) -> Value {
    Value::from(n(o, "/status/readyReplicas"))
}

fn ds_desired(o: &Value) -> Value {
    Value::from(n(o, "/status/desiredNumberScheduled"))
}

fn ds_current(o: &Value) -> Value {
    Value::from(n(o, "/status/currentNumberScheduled"))
}

fn ds_ready(o: &Value) -> Value {
    Value::from(n(o, "/status/numberReady"))
}

fn ds_updated(o: &Value) -> Value {
    Value::from(n(o, "/status/updatedNumberScheduled"))
}

fn ds_available(o: &Value) -> Value {
    Value::from(n(o, "/status/numberAvailable"))
}

fn ds_node_selector(o: &Value) -> Value {
    map_selector(o, "/spec/template/spec/nodeSelector")
}

fn job_status(o: &Value) -> Value {
    let has = |t: &str| {
        arr(o, "/status/conditions").iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(t)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    };
    let status = if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if o.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    Value::String(status.into())
}

fn job_completions(o: &Value) -> Value {
    let succeeded = n(o, "/status/succeeded");
    match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => Value::String(format!("{succeeded}/{c}")),
        None => {
            let parallelism = o
                .pointer("/spec/parallelism")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if parallelism > 1 {
                Value::String(format!("{succeeded}/1 of {parallelism}"))
            } else {
                Value::String(format!("{succeeded}/1"))
            }
        }
    }
}

fn job_duration(o: &Value) -> Value {
    let start = s(o, "/status/startTime");
    if start.is_empty() {
        return Value::String(String::new());
    }
    let (Ok(a), end) = (
        start.parse::<jiff::Timestamp>(),
        s(o, "/status/completionTime"),
    ) else {
        return Value::String(String::new());
    };
    let b = end
        .parse::<jiff::Timestamp>()
        .unwrap_or_else(|_| jiff::Timestamp::now());
    Value::String(human_duration(b.as_second() - a.as_second()))
}

fn cj_schedule(o: &Value) -> Value {
    Value::String(s(o, "/spec/schedule").to_string())
}

fn cj_timezone(o: &Value) -> Value {
    none_if_empty(s(o, "/spec/timeZone").to_string())
}

fn cj_suspend(o: &Value) -> Value {
    Value::String(
        o.pointer("/spec/suspend")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            .to_string()
            .replace("true", "True")
            .replace("false", "False"),
    )
}

fn cj_active(o: &Value) -> Value {
    Value::from(arr(o, "/status/active").len())
}

fn cj_last(o: &Value) -> Value {
    let t = s(o, "/status/lastScheduleTime");
    Value::String(if t.is_empty() {
        "<none>".into()
    } else {
        since(t)
    })
}

fn cj_containers(o: &Value) -> Value {
    containers(o, "/spec/jobTemplate/spec/template/spec/containers", "name")
}

fn cj_images(o: &Value) -> Value {
    containers(
        o,
        "/spec/jobTemplate/spec/template/spec/containers",
        "image",
    )
}

fn svc_type(o: &Value) -> Value {
    let t = s(o, "/spec/type");
    Value::String(if t.is_empty() { "ClusterIP" } else { t }.into())
}

fn svc_cluster_ip(o: &Value) -> Value {
    none_if_empty(s(o, "/spec/clusterIP").to_string())
}

fn svc_external_ip(o: &Value) -> Value {
    let external: Vec<&str> = arr(o, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let lb: Vec<&str> = arr(o, "/status/loadBalancer/ingress")
        .iter()
        .filter_map(|i| {
            i.get("ip")
                .or_else(|| i.get("hostname"))
                .and_then(Value::as_str)
        })
        .collect();
    match s(o, "/spec/type") {
        "ExternalName" => Value::String(s(o, "/spec/externalName").to_string()),
        "LoadBalancer" => {
            let mut all = lb;
            all.extend(external);
            if all.is_empty() {
                Value::String("<pending>".into())
            } else {
                Value::String(all.join(","))
            }
        }
        _ => none_if_empty(external.join(",")),
    }
}

fn svc_ports(o: &Value) -> Value {
    let ports: Vec<String> = arr(o, "/spec/ports")
        .iter()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(np) if np > 0 => format!("{port}:{np}/{proto}"),
                _ => format!("{port}/{proto}"),
            }
        })
        .collect();
    none_if_empty(ports.join(","))
}

fn svc_selector(o: &Value) -> Value {
    map_selector(o, "/spec/selector")
}

fn data_count(o: &Value) -> Value {
    let count = |k: &str| o.get(k).and_then(Value::as_object).map_or(0, Map::len);
    Value::from(count("data") + count("binaryData") + count("stringData"))
}

fn secret_type(o: &Value) -> Value {
    Value::String(s(o, "/type").to_string())
}

fn phase(o: &Value) -> Value {
    Value::String(s(o, "/status/phase").to_string())
}

fn node_status(o: &Value) -> Value {
    let mut out = Vec::new();
    for c in arr(o, "/status/conditions") {
        if c.get("type").and_then(Value::as_str) == Some("Ready") {
            out.push(
                match c.get("status").and_then(Value::as_str) {
                    Some("True") => "Ready",
                    Some("False") => "NotReady",
                    _ => "Unknown",
                }
                .to_string(),
            );
        }
    }
    if out.is_empty() {
        out.push("Unknown".into());
    }
    if o.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        out.push("SchedulingDisabled".into());
    }
    Value::String(out.join(","))
}

fn node_roles(o: &Value) -> Value {
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    if let Some(r) = k.strip_prefix("node-role.kubernetes.io/") {
                        Some(r.to_string())
                    } else if k == "kubernetes.io/role" {
                        v.as_str().map(str::to_string)
                    } else {
                        None
                    }
                })
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    none_if_empty(roles.join(","))
}

fn node_version(o: &Value) -> Value {
    Value::String(s(o, "/status/nodeInfo/kubeletVersion").to_string())
}

fn node_address(o: &Value, ty: &str) -> Value {
    let a = arr(o, "/status/addresses")
        .iter()
        .find(|a| a.get("type").and_then(Value::as_str) == Some(ty))
        .and_then(|a| a.get("address"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    none_if_empty(a.to_string())
}

fn node_internal_ip(o: &Value) -> Value {
    node_address(o, "InternalIP")
}

fn node_external_ip(o: &Value) -> Value {
    node_address(o, "ExternalIP")
}

fn node_os_image(o: &Value) -> Value {
    none_if_empty(s(o, "/status/nodeInfo/osImage").to_string())
}

fn node_kernel(o: &Value) -> Value {
    none_if_empty(s(o, "/status/nodeInfo/kernelVersion").to_string())
}

fn node_runtime(o: &Value) -> Value {
    none_if_empty(s(o, "/status/nodeInfo/containerRuntimeVersion").to_string())
}

fn sa_secrets(o: &Value) -> Value {
    Value::from(arr(o, "/secrets").len())
}

fn event_last_seen(o: &Value) -> Value {
    for p in ["/series/lastObservedTime", "/lastTimestamp", "/eventTime"] {
        let t = s(o, p);
        if !t.is_empty() {
            return Value::String(since(t));
        }
    }
    age(o)
}

fn event_first_seen(o: &Value) -> Value {
    for p in ["/firstTimestamp", "/eventTime"] {
        let t = s(o, p);
        if !t.is_empty() {
            return Value::String(since(t));
        }
    }
    age(o)
}

fn event_type(o: &Value) -> Value {
    Value::String(s(o, "/type").to_string())
}

fn event_reason(o: &Value) -> Value {
    Value::String(s(o, "/reason").to_string())
}

fn event_object(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        s(o, "/involvedObject/kind").to_lowercase(),
        s(o, "/involvedObject/name")
    ))
}

fn event_subobject(o: &Value) -> Value {
    Value::String(s(o, "/involvedObject/fieldPath").to_string())
}

fn event_source(o: &Value) -> Value {
    let c = s(o, "/source/component");
    let h = s(o, "/source/host");
    Value::String(match (c.is_empty(), h.is_empty()) {
        (true, _) => s(o, "/reportingComponent").to_string(),
        (false, true) => c.to_string(),
        (false, false) => format!("{c}, {h}"),
    })
}

fn event_message(o: &Value) -> Value {
    Value::String(s(o, "/message").trim().to_string())
}

fn event_count(o: &Value) -> Value {
    let c = o
        .pointer("/series/count")
        .or_else(|| o.get("count"))
        .and_then(Value::as_i64)
        .unwrap_or(1);
    Value::from(c)
}

fn ing_class(o: &Value) -> Value {
    none_if_empty(s(o, "/spec/ingressClassName").to_string())
}

fn ing_hosts(o: &Value) -> Value {
    let hosts: Vec<&str> = arr(o, "/spec/rules")
        .iter()
        .filter_map(|r| r.get("host").and_then(Value::as_str))
        .collect();
    Value::String(if hosts.is_empty() {
        "*".into()
    } else {
        hosts.join(",")
    })
}

fn ing_address(o: &Value) -> Value {
    let a: Vec<&str> = arr(o, "/status/loadBalancer/ingress")
        .iter()
        .filter_map(|i| {
            i.get("ip")
                .or_else(|| i.get("hostname"))
                .and_then(Value::as_str)
        })
        .collect();
    Value::String(a.join(","))
}

fn ing_ports(o: &Value) -> Value {
    Value::String(if arr(o, "/spec/tls").is_empty() {
        "80".into()
    } else {
        "80, 443".into()
    })
}

fn access_modes(o: &Value, path: &str) -> Value {
    let short: Vec<&str> = arr(o, path)
        .iter()
        .filter_map(Value::as_str)
        .map(|m| match m {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect();
    Value::String(short.join(","))
}

fn pvc_status(o: &Value) -> Value {
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        return Value::String("Terminating".into());
    }
    phase(o)
}

fn pvc_volume(o: &Value) -> Value {
    Value::String(s(o, "/spec/volumeName").to_string())
}

fn pvc_capacity(o: &Value) -> Value {
    Value::String(s(o, "/status/capacity/storage").to_string())
}

fn pvc_modes(o: &Value) -> Value {
    access_modes(o, "/status/accessModes")
}

fn storage_class(o: &Value) -> Value {
    let c = s(o, "/spec/storageClassName");
    let c = if c.is_empty() {
        s(
            o,
            "/metadata/annotations/volume.beta.kubernetes.io~1storage-class",
        )
    } else {
        c
    };
    none_if_empty(c.to_string())
}

fn vac(o: &Value) -> Value {
    none_if_empty(s(o, "/spec/volumeAttributesClassName").to_string())
}

fn volume_mode(o: &Value) -> Value {
    let m = s(o, "/spec/volumeMode");
    Value::String(if m.is_empty() { "<unset>" } else { m }.into())
}

fn pv_capacity(o: &Value) -> Value {
    Value::String(s(o, "/spec/capacity/storage").to_string())
}

fn pv_modes(o: &Value) -> Value {
    access_modes(o, "/spec/accessModes")
}

fn pv_reclaim(o: &Value) -> Value {
    Value::String(s(o, "/spec/persistentVolumeReclaimPolicy").to_string())
}

fn pv_claim(o: &Value) -> Value {
    let ns = s(o, "/spec/claimRef/namespace");
    let name = s(o, "/spec/claimRef/name");
    Value::String(if name.is_empty() {
        String::new()
    } else {
        format!("{ns}/{name}")
    })
}

fn pv_reason(o: &Value) -> Value {
    Value::String(s(o, "/status/reason").to_string())
}

fn binding_role(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        s(o, "/roleRef/kind"),
        s(o, "/roleRef/name")
    ))
}

fn subjects(o: &Value, kind: &str) -> Value {
    let names: Vec<String> = arr(o, "/subjects")
        .iter()
        .filter(|sub| sub.get("kind").and_then(Value::as_str) == Some(kind))
        .map(|sub| {
            let name = sub.get("name").and_then(Value::as_str).unwrap_or_default();
            match sub.get("namespace").and_then(Value::as_str) {
                Some(ns) if kind == "ServiceAccount" => format!("{ns}/{name}"),
                _ => name.to_string(),
            }
        })
        .collect();
    Value::String(names.join(", "))
}

fn binding_users(o: &Value) -> Value {
    subjects(o, "User")
}

fn binding_groups(o: &Value) -> Value {
    subjects(o, "Group")
}

fn binding_sas(o: &Value) -> Value {
    subjects(o, "ServiceAccount")
}

fn endpoints(o: &Value) -> Value {
    let mut out = Vec::new();
    for subset in arr(o, "/subsets") {
        let ports: Vec<i64> = subset
            .get("ports")
            .and_then(Value::as_array)
            .map(|p| {
                p.iter()
                    .filter_map(|p| p.get("port").and_then(Value::as_i64))
                    .collect()
            })
            .unwrap_or_default();
        for a in subset
            .get("addresses")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let ip = a.get("ip").and_then(Value::as_str).unwrap_or_default();
            if ports.is_empty() {
                out.push(ip.to_string());
            }
            for p in &ports {
                out.push(format!("{ip}:{p}"));
            }
        }
    }
    let more = out.len().saturating_sub(3);
    out.truncate(3);
    let mut joined = out.join(",");
    if more > 0 {
        joined.push_str(&format!(" + {more} more..."));
    }
    none_if_empty(joined)
}

fn sts_ready(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        n(o, "/status/readyReplicas"),
        spec_replicas(o)
    ))
}

// ---------------------------------------------------------------- the table

const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DESC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn col(name: &'static str, ty: &'static str, priority: u8, cell: fn(&Value) -> Value) -> Column {
    let (format, description) = match name {
        "Name" => ("name", NAME_DESC),
        "Age" => ("", AGE_DESC),
        _ => ("", ""),
    };
    Column {
        name,
        ty,
        format,
        priority,
        description,
        cell,
    }
}

fn builtin_columns(group: &str, resource: &str) -> Vec<Column> {
    let name_col = || col("Name", "string", 0, name);
    let age_col = || col("Age", "string", 0, age);
    let workload_wide = || {
        vec![
            col("Containers", "string", 1, template_containers),
            col("Images", "string", 1, template_images),
            col("Selector", "string", 1, selector),
        ]
    };
    let mut cols = match (group, resource) {
        ("", "pods") => vec![
            name_col(),
            col("Ready", "string", 0, pod_ready),
            col("Status", "string", 0, pod_status),
            col("Restarts", "string", 0, pod_restarts),
            age_col(),
            col("IP", "string", 1, pod_ip),
            col("Node", "string", 1, pod_node),
            col("Nominated Node", "string", 1, pod_nominated),
            col("Readiness Gates", "string", 1, pod_gates),
        ],
        ("apps", "deployments") => {
            let mut c = vec![
                name_col(),
                col("Ready", "string", 0, deploy_ready),
                col("Up-to-date", "string", 0, updated),
                col("Available", "string", 0, available),
                age_col(),
            ];
            c.extend(workload_wide());
            c
        }
        ("apps", "replicasets") | ("", "replicationcontrollers") => {
            let mut c = vec![
                name_col(),
                col("Desired", "integer", 0, desired),
                col("Current", "integer", 0, current),
                col("Ready", "integer", 0, ready_replicas),
                age_col(),
            ];
            c.extend(workload_wide());
            c
        }
        ("apps", "statefulsets") => vec![
            name_col(),
            col("Ready", "string", 0, sts_ready),
            age_col(),
            col("Containers", "string", 1, template_containers),
            col("Images", "string", 1, template_images),
        ],
        ("apps", "daemonsets") => {
            let mut c = vec![
                name_col(),
                col("Desired", "integer", 0, ds_desired),
                col("Current", "integer", 0, ds_current),
                col("Ready", "integer", 0, ds_ready),
                col("Up-to-date", "integer", 0, ds_updated),
                col("Available", "integer", 0, ds_available),
                col("Node Selector", "string", 0, ds_node_selector),
                age_col(),
            ];
            c.extend(workload_wide());
            c
        }
        ("batch", "jobs") => {
            let mut c = vec![
                name_col(),
                col("Status", "string", 0, job_status),
                col("Completions", "string", 0, job_completions),
                col("Duration", "string", 0, job_duration),
                age_col(),
            ];
            c.extend(workload_wide());
            c
        }
        ("batch", "cronjobs") => vec![
            name_col(),
            col("Schedule", "string", 0, cj_schedule),
            col("Timezone", "string", 0, cj_timezone),
            col("Suspend", "boolean", 0, cj_suspend),
            col("Active", "integer", 0, cj_active),
            col("Last Schedule", "string", 0, cj_last),
            age_col(),
            col("Containers", "string", 1, cj_containers),
            col("Images", "string", 1, cj_images),
            col("Selector", "string", 1, selector),
        ],
        ("", "services") => vec![
            name_col(),
            col("Type", "string", 0, svc_type),
            col("Cluster-IP", "string", 0, svc_cluster_ip),
            col("External-IP", "string", 0, svc_external_ip),
            col("Port(s)", "string", 0, svc_ports),
            age_col(),
            col("Selector", "string", 1, svc_selector),
        ],
        ("", "configmaps") => vec![name_col(), col("Data", "string", 0, data_count), age_col()],
        ("", "secrets") => vec![
            name_col(),
            col("Type", "string", 0, secret_type),
            col("Data", "string", 0, data_count),
            age_col(),
        ],
        ("", "namespaces") => vec![name_col(), col("Status", "string", 0, phase), age_col()],
        ("", "nodes") => vec![
            name_col(),
            col("Status", "string", 0, node_status),
            col("Roles", "string", 0, node_roles),
            age_col(),
            col("Version", "string", 0, node_version),
            col("Internal-IP", "string", 1, node_internal_ip),
            col("External-IP", "string", 1, node_external_ip),
            col("OS-Image", "string", 1, node_os_image),
            col("Kernel-Version", "string", 1, node_kernel),
            col("Container-Runtime", "string", 1, node_runtime),
        ],
        ("", "serviceaccounts") => {
            vec![
                name_col(),
                col("Secrets", "string", 0, sa_secrets),
                age_col(),
            ]
        }
        ("", "events") => vec![
            col("Last Seen", "string", 0, event_last_seen),
            col("Type", "string", 0, event_type),
            col("Reason", "string", 0, event_reason),
            col("Object", "string", 0, event_object),
            col("Subobject", "string", 1, event_subobject),
            col("Source", "string", 1, event_source),
            col("Message", "string", 0, event_message),
            col("First Seen", "string", 1, event_first_seen),
            col("Count", "string", 1, event_count),
            col("Name", "string", 1, name),
        ],
        ("", "endpoints") => vec![
            name_col(),
            col("Endpoints", "string", 0, endpoints),
            age_col(),
        ],
        ("networking.k8s.io", "ingresses") => vec![
            name_col(),
            col("Class", "string", 0, ing_class),
            col("Hosts", "string", 0, ing_hosts),
            col("Address", "string", 0, ing_address),
            col("Ports", "string", 0, ing_ports),
            age_col(),
        ],
        ("", "persistentvolumeclaims") => vec![
            name_col(),
            col("Status", "string", 0, pvc_status),
            col("Volume", "string", 0, pvc_volume),
            col("Capacity", "string", 0, pvc_capacity),
            col("Access Modes", "string", 0, pvc_modes),
            col("StorageClass", "string", 0, storage_class),
            col("VolumeAttributesClass", "string", 0, vac),
            age_col(),
            col("VolumeMode", "string", 1, volume_mode),
        ],
        ("", "persistentvolumes") => vec![
            name_col(),
            col("Capacity", "string", 0, pv_capacity),
            col("Access Modes", "string", 0, pv_modes),
            col("Reclaim Policy", "string", 0, pv_reclaim),
            col("Status", "string", 0, phase),
            col("Claim", "string", 0, pv_claim),
            col("StorageClass", "string", 0, storage_class),
            col("VolumeAttributesClass", "string", 0, vac),
            col("Reason", "string", 0, pv_reason),
            age_col(),
            col("VolumeMode", "string", 1, volume_mode),
        ],
        ("rbac.authorization.k8s.io", "roles" | "clusterroles") => {
            vec![name_col(), col("Created At", "date", 0, created_at)]
        }
        ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => vec![
            name_col(),
            col("Role", "string", 0, binding_role),
            age_col(),
            col("Users", "string", 1, binding_users),
            col("Groups", "string", 1, binding_groups),
            col("ServiceAccounts", "string", 1, binding_sas),
        ],
        _ => Vec::new(),
    };
    if cols.is_empty() {
        // apiserver pkg/registry/rest/table.go: defaultTableConvertor
        cols = vec![name_col(), col("Created At", "date", 0, created_at)];
    }
    cols
}

fn custom_columns(engine: &Engine, rt: &ResourceType) -> Vec<CustomColumn> {
    let crd_name = format!("{}.{}", rt.plural, rt.group);
    let crd = engine
        .registry()
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .and_then(|crd_rt| {
            engine
                .store()
                .get(&crd_rt.group_resource(), &(String::new(), crd_name))
        });
    let mut cols = Vec::new();
    if let Some(crd) = crd {
        let version = arr(&crd, "/spec/versions")
            .iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(rt.version.as_str()));
        for c in version
            .and_then(|v| v.get("additionalPrinterColumns"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let field = |k: &str| {
                c.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            cols.push(CustomColumn {
                name: field("name"),
                ty: field("type"),
                format: field("format"),
                description: field("description"),
                priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                path: field("jsonPath"),
            });
        }
    }
    if cols.is_empty() {
        // apiextensions-apiserver: a version without columns shows its age.
        cols.push(CustomColumn {
            name: "Age".into(),
            ty: "date".into(),
            format: String::new(),
            description: AGE_DESC.into(),
            priority: 0,
            path: ".metadata.creationTimestamp".into(),
        });
    }
    cols
}

fn columns_for(engine: &Engine, rt: &ResourceType) -> Columns {
    if rt.builtin {
        Columns::Builtin(builtin_columns(&rt.group, &rt.plural))
    } else {
        Columns::Custom(custom_columns(engine, rt))
    }
}

/// tableconvertor `cellForJSONValue`.
fn custom_cell(ty: &str, v: Option<Value>) -> Value {
    let Some(v) = v else { return Value::Null };
    match (ty, &v) {
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, Value::from),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, Value::from),
        ("boolean", Value::Bool(_)) => v,
        ("string", Value::String(_)) => v,
        ("string", other) => Value::String(match other {
            Value::Null => return Value::Null,
            other => jsonpath::print(other),
        }),
        ("date", Value::String(t)) => Value::String(match t.parse::<jiff::Timestamp>() {
            Ok(_) => since(t),
            Err(_) => "<invalid>".into(),
        }),
        _ => Value::Null,
    }
}

fn definitions(cols: &Columns) -> Vec<Value> {
    match cols {
        Columns::Builtin(cols) => cols
            .iter()
            .map(|c| {
                json!({"name": c.name, "type": c.ty, "format": c.format,
                       "description": c.description, "priority": c.priority})
            })
            .collect(),
        Columns::Custom(cols) => {
            let mut out = vec![json!({"name": "Name", "type": "string", "format": "name",
                                      "description": NAME_DESC, "priority": 0})];
            out.extend(cols.iter().map(|c| {
                json!({"name": c.name, "type": c.ty, "format": c.format,
                       "description": c.description, "priority": c.priority})
            }));
            out
        }
    }
}

fn row(cols: &Columns, obj: &Value, include: IncludeObject) -> Value {
    let cells: Vec<Value> = match cols {
        Columns::Builtin(cols) => cols.iter().map(|c| (c.cell)(obj)).collect(),
        Columns::Custom(cols) => {
            let mut out = vec![name(obj)];
            out.extend(
                cols.iter()
                    .map(|c| custom_cell(&c.ty, jsonpath::first(&c.path, obj))),
            );
            out
        }
    };
    let mut r = Map::new();
    r.insert("cells".into(), Value::Array(cells));
    match include {
        IncludeObject::None => {}
        IncludeObject::Object => {
            r.insert("object".into(), obj.clone());
        }
        IncludeObject::Metadata => {
            r.insert(
                "object".into(),
                crate::endpoints::metadata::partial("v1", obj),
            );
        }
    }
    Value::Object(r)
}

fn table(version: &str, cols: &Columns, metadata: Value, rows: Vec<Value>) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "columnDefinitions": definitions(cols),
        "rows": rows,
    })
}

/// A table of one object (GET of a named object).
pub fn for_object(
    engine: &Engine,
    rt: &ResourceType,
    version: &str,
    obj: &Value,
    include: IncludeObject,
) -> Value {
    let cols = columns_for(engine, rt);
    let rv = obj
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    let metadata = json!({"resourceVersion": rv});
    table(version, &cols, metadata, vec![row(&cols, obj, include)])
}

/// A table of a list (its resourceVersion and continue token carried over).
pub fn for_list(
    engine: &Engine,
    rt: &ResourceType,
    version: &str,
    list: &ListResult,
    include: IncludeObject,
) -> Value {
    let cols = columns_for(engine, rt);
    let rows = list
        .items
        .iter()
        .map(|item| row(&cols, item, include))
        .collect();
    table(
        version,
        &cols,
        crate::endpoints::metadata::list_meta(list),
        rows,
    )
}

/// The object of one watch event as a one-row table.
pub fn for_watch_event(
    engine: &Engine,
    rt: &ResourceType,
    version: &str,
    obj: &Value,
    include: IncludeObject,
) -> Value {
    for_object(engine, rt, version, obj, include)
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

    #[test]
    fn pod_cells_follow_printers_go() {
        let pod = json!({"metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"ready": true, "restartCount": 2},
                {"ready": false, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        assert_eq!(pod_ready(&pod), json!("1/2"));
        assert_eq!(pod_status(&pod), json!("CrashLoopBackOff"));
        assert_eq!(pod_restarts(&pod), json!(3));
    }
}
