//! The core group (`""`, `/api/v1`): kube-apiserver's `pkg/registry/core/<resource>/storage`
//! and printers.go's printers of its kinds.

use serde_json::{Map, Value};

use super::apps::REPLICA_COLUMNS;
use super::printers::{
    AGE, NAME, age, arr, col, computed, human_duration, map_selector, none_if_empty, s, since,
};
use super::{ALL, Builtin, row};
use crate::registry::{Cell, NameRule};
use crate::strategy::{StrategyRef, core, services};

/// The API group.
pub(super) const GROUP: &str = "";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        short: &["ns"],
        name_rule: NameRule::Label,
        fields: &["status.phase"],
        strategy: || StrategyRef::new(core::Namespaces),
        columns: &[
            NAME,
            col("Status", "string", 0, Cell::Path(".status.phase")),
            AGE,
        ],
        ..row("namespaces")
    },
    Builtin {
        short: &["po"],
        categories: ALL,
        generation: true,
        fields: &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        strategy: || StrategyRef::new(core::Pods),
        columns: &[
            NAME,
            computed("Ready", pod_ready),
            computed("Status", pod_status),
            computed("Restarts", pod_restarts),
            AGE,
            col("IP", "string", 1, Cell::PathOrNone(".status.podIP")),
            col("Node", "string", 1, Cell::PathOrNone(".spec.nodeName")),
            col(
                "Nominated Node",
                "string",
                1,
                Cell::PathOrNone(".status.nominatedNodeName"),
            ),
            col("Readiness Gates", "string", 1, Cell::Computed(pod_gates)),
        ],
        ..row("pods")
    },
    Builtin {
        short: &["svc"],
        categories: ALL,
        name_rule: NameRule::Label,
        strategy: || StrategyRef::new(services::Services::default()),
        columns: &[
            NAME,
            computed("Type", svc_type),
            col(
                "Cluster-IP",
                "string",
                0,
                Cell::PathOrNone(".spec.clusterIP"),
            ),
            computed("External-IP", svc_external_ip),
            computed("Port(s)", svc_ports),
            AGE,
            col("Selector", "string", 1, Cell::Computed(svc_selector)),
        ],
        ..row("services")
    },
    Builtin {
        short: &["cm"],
        columns: &[NAME, computed("Data", data_count), AGE],
        ..row("configmaps")
    },
    Builtin {
        fields: &["type"],
        strategy: || StrategyRef::new(core::Secrets),
        columns: &[
            NAME,
            col("Type", "string", 0, Cell::Path(".type")),
            computed("Data", data_count),
            AGE,
        ],
        ..row("secrets")
    },
    Builtin {
        short: &["ev"],
        fields: &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        columns: &[
            computed("Last Seen", event_last_seen),
            col("Type", "string", 0, Cell::Path(".type")),
            col("Reason", "string", 0, Cell::Path(".reason")),
            computed("Object", event_object),
            col(
                "Subobject",
                "string",
                1,
                Cell::Path(".involvedObject.fieldPath"),
            ),
            col("Source", "string", 1, Cell::Computed(event_source)),
            computed("Message", event_message),
            col("First Seen", "string", 1, Cell::Computed(event_first_seen)),
            col("Count", "string", 1, Cell::Computed(event_count)),
            col("Name", "string", 1, Cell::Path(".metadata.name")),
        ],
        ..row("events")
    },
    Builtin {
        short: &["sa"],
        // serviceaccount/storage/storage.go sets `ReturnDeletedObject`.
        strategy: super::returns_deleted_object,
        columns: &[NAME, computed("Secrets", sa_secrets), AGE],
        ..row("serviceaccounts")
    },
    Builtin {
        short: &["no"],
        fields: &["spec.unschedulable"],
        columns: &[
            NAME,
            computed("Status", node_status),
            computed("Roles", node_roles),
            AGE,
            col(
                "Version",
                "string",
                0,
                Cell::Path(".status.nodeInfo.kubeletVersion"),
            ),
            col("Internal-IP", "string", 1, Cell::Computed(node_internal_ip)),
            col("External-IP", "string", 1, Cell::Computed(node_external_ip)),
            col(
                "OS-Image",
                "string",
                1,
                Cell::PathOrNone(".status.nodeInfo.osImage"),
            ),
            col(
                "Kernel-Version",
                "string",
                1,
                Cell::PathOrNone(".status.nodeInfo.kernelVersion"),
            ),
            col(
                "Container-Runtime",
                "string",
                1,
                Cell::PathOrNone(".status.nodeInfo.containerRuntimeVersion"),
            ),
        ],
        ..row("nodes")
    },
    Builtin {
        short: &["cs"],
        ..row("componentstatuses")
    },
    Builtin {
        short: &["ep"],
        columns: &[NAME, computed("Endpoints", endpoints), AGE],
        ..row("endpoints")
    },
    Builtin {
        short: &["limits"],
        ..row("limitranges")
    },
    Builtin {
        short: &["pv"],
        columns: &[
            NAME,
            col(
                "Capacity",
                "string",
                0,
                Cell::Path(".spec.capacity.storage"),
            ),
            computed("Access Modes", pv_modes),
            col(
                "Reclaim Policy",
                "string",
                0,
                Cell::Path(".spec.persistentVolumeReclaimPolicy"),
            ),
            col("Status", "string", 0, Cell::Path(".status.phase")),
            computed("Claim", pv_claim),
            computed("StorageClass", storage_class),
            col(
                "VolumeAttributesClass",
                "string",
                0,
                Cell::PathOrNone(".spec.volumeAttributesClassName"),
            ),
            col("Reason", "string", 0, Cell::Path(".status.reason")),
            AGE,
            col("VolumeMode", "string", 1, Cell::Computed(volume_mode)),
        ],
        ..row("persistentvolumes")
    },
    Builtin {
        short: &["pvc"],
        strategy: || StrategyRef::new(core::PersistentVolumeClaims),
        columns: &[
            NAME,
            computed("Status", pvc_status),
            col("Volume", "string", 0, Cell::Path(".spec.volumeName")),
            col(
                "Capacity",
                "string",
                0,
                Cell::Path(".status.capacity.storage"),
            ),
            computed("Access Modes", pvc_modes),
            computed("StorageClass", storage_class),
            col(
                "VolumeAttributesClass",
                "string",
                0,
                Cell::PathOrNone(".spec.volumeAttributesClassName"),
            ),
            AGE,
            col("VolumeMode", "string", 1, Cell::Computed(volume_mode)),
        ],
        ..row("persistentvolumeclaims")
    },
    Builtin {
        short: &["rc"],
        categories: ALL,
        generation: true,
        fields: &["status.replicas"],
        scale: true,
        strategy: || StrategyRef::new(core::ReplicationControllers),
        columns: REPLICA_COLUMNS,
        ..row("replicationcontrollers")
    },
    Builtin {
        short: &["quota"],
        ..row("resourcequotas")
    },
    Builtin {
        strategy: || StrategyRef::new(core::PodTemplates),
        ..row("podtemplates")
    },
];

// ---------------------------------------------------------------- cells (printers.go)

fn pod_ready(p: &Value) -> Value {
    Value::String(print_pod(p).ready)
}

fn pod_status(p: &Value) -> Value {
    Value::String(print_pod(p).reason)
}

fn pod_restarts(p: &Value) -> Value {
    Value::String(print_pod(p).restarts)
}

/// The Ready, Status and Restarts cells of a pod's row.
struct PodCells {
    ready: String,
    reason: String,
    restarts: String,
}

/// printers.go `printPod`: how many containers are ready (restartable init containers,
/// sidecars, included), the status kubectl shows (the phase, or the pod's reason, or the
/// reason a container waits or terminated, `Init:...` while initializing, `Terminating`),
/// and the restarts with the age of the last one (`3 (10s ago)`).
fn print_pod(p: &Value) -> PodCells {
    let init_specs = arr(p, "/spec/initContainers");
    let is_sidecar = |name: &str| {
        init_specs.iter().any(|c| {
            c.get("name").and_then(Value::as_str) == Some(name)
                && c.get("restartPolicy").and_then(Value::as_str) == Some("Always")
        })
    };
    let mut total = arr(p, "/spec/containers").len();
    total += init_specs
        .iter()
        .filter(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"))
        .count();
    let mut ready = 0;
    let mut restarts = 0;
    let mut sidecar_restarts = 0;
    let mut last_restart: Option<jiff::Timestamp> = None;
    let mut last_sidecar_restart: Option<jiff::Timestamp> = None;
    let finished = |c: &Value| {
        c.pointer("/lastState/terminated/finishedAt")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    };
    let mut reason = s(p, "/status/phase").to_string();
    if !s(p, "/status/reason").is_empty() {
        reason = s(p, "/status/reason").to_string();
    }
    let conditions = arr(p, "/status/conditions");
    let condition_true = |type_: &str| {
        conditions.iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(type_)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    };
    if conditions.iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some("PodScheduled")
            && c.get("reason").and_then(Value::as_str) == Some("SchedulingGated")
    }) {
        reason = "SchedulingGated".into();
    }
    let init_statuses = arr(p, "/status/initContainerStatuses");
    let mut initializing = false;
    for (i, c) in init_statuses.iter().enumerate() {
        let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
        restarts += c.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
        last_restart = last_restart.max(finished(c));
        if is_sidecar(name) {
            sidecar_restarts += c.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
            last_sidecar_restart = last_sidecar_restart.max(finished(c));
        }
        let terminated = c.pointer("/state/terminated");
        let exit_code = terminated
            .and_then(|t| t.get("exitCode"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let waiting_reason = s(c, "/state/waiting/reason");
        if terminated.is_some() && exit_code == 0 {
            continue;
        }
        if is_sidecar(name) && c.get("started").and_then(Value::as_bool) == Some(true) {
            if c.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            let r = s(t, "/reason");
            let signal = t.get("signal").and_then(Value::as_i64).unwrap_or(0);
            if !r.is_empty() {
                format!("Init:{r}")
            } else if signal != 0 {
                format!("Init:Signal:{signal}")
            } else {
                format!("Init:ExitCode:{exit_code}")
            }
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }
    if !initializing || condition_true("Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for c in arr(p, "/status/containerStatuses").iter().rev() {
            restarts += c.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
            last_restart = last_restart.max(finished(c));
            let waiting = s(c, "/state/waiting/reason");
            let terminated = c.pointer("/state/terminated");
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if let Some(t) = terminated {
                let r = s(t, "/reason");
                let signal = t.get("signal").and_then(Value::as_i64).unwrap_or(0);
                let code = t.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
                reason = if !r.is_empty() {
                    r.to_string()
                } else if signal != 0 {
                    format!("Signal:{signal}")
                } else {
                    format!("ExitCode:{code}")
                };
            } else if c.get("ready").and_then(Value::as_bool) == Some(true)
                && c.pointer("/state/running").is_some()
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true("Ready") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    let phase = s(p, "/status/phase");
    if p.pointer("/metadata/deletionTimestamp").is_some() {
        if s(p, "/status/reason") == "NodeLost" {
            reason = "Unknown".into();
        } else if !matches!(phase, "Succeeded" | "Failed") {
            reason = "Terminating".into();
        }
    }
    if reason.is_empty() {
        reason = "Pending".into();
    }
    let restarts = match last_restart {
        Some(t) if restarts != 0 => {
            let ago = human_duration(crate::clock::now().as_second() - t.as_second());
            format!("{restarts} ({ago} ago)")
        }
        _ => restarts.to_string(),
    };
    PodCells {
        ready: format!("{ready}/{total}"),
        reason,
        restarts,
    }
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

fn svc_type(o: &Value) -> Value {
    let t = s(o, "/spec/type");
    Value::String(if t.is_empty() { "ClusterIP" } else { t }.into())
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

/// `printNode`'s STATUS: `Ready` when the Ready condition is True, `NotReady` when it is
/// anything else (`False` or `Unknown`), `Unknown` without one; `,SchedulingDisabled` for a
/// cordoned node.
fn node_status(o: &Value) -> Value {
    let mut out = Vec::new();
    for c in arr(o, "/status/conditions") {
        if c.get("type").and_then(Value::as_str) == Some("Ready") {
            let ready = c.get("status").and_then(Value::as_str) == Some("True");
            out.push(if ready { "Ready" } else { "NotReady" }.to_string());
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

fn event_object(o: &Value) -> Value {
    Value::String(format!(
        "{}/{}",
        s(o, "/involvedObject/kind").to_lowercase(),
        s(o, "/involvedObject/name")
    ))
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
    Value::String(s(o, "/status/phase").to_string())
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

fn volume_mode(o: &Value) -> Value {
    let m = s(o, "/spec/volumeMode");
    Value::String(if m.is_empty() { "<unset>" } else { m }.into())
}

fn pv_modes(o: &Value) -> Value {
    access_modes(o, "/spec/accessModes")
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `printers.go` `printNode`: any Ready status but True is `NotReady`.
    #[test]
    fn node_status_follows_printers_go() {
        let node = |ready: &str, unschedulable: bool| {
            json!({"spec": {"unschedulable": unschedulable},
                   "status": {"conditions": [{"type": "Ready", "status": ready}]}})
        };
        assert_eq!(node_status(&node("True", false)), json!("Ready"));
        assert_eq!(node_status(&node("Unknown", false)), json!("NotReady"));
        assert_eq!(
            node_status(&node("False", true)),
            json!("NotReady,SchedulingDisabled")
        );
        assert_eq!(node_status(&json!({})), json!("Unknown"));
    }

    #[test]
    fn pod_cells_follow_printers_go() {
        let pod = json!({"metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"ready": true, "restartCount": 2, "state": {"running": {}}},
                {"ready": false, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        assert_eq!(pod_ready(&pod), json!("1/2"));
        assert_eq!(pod_status(&pod), json!("CrashLoopBackOff"));
        assert_eq!(pod_restarts(&pod), json!("3"));
    }

    /// printers.go `printPod` against what kubectl shows for a real cluster's pods: the
    /// restarts with the age of the last one, `0/1 Running` for an unready container, the
    /// terminated reason of a failed pod, image pull states, `Init:` states, and a finished
    /// pod being deleted keeping its status.
    #[test]
    fn pod_rows_read_as_kubectl_shows_them() {
        let ten_seconds_ago = crate::clock::rfc3339(
            crate::clock::now()
                .checked_sub(jiff::SignedDuration::from_secs(10))
                .unwrap_or_else(|_| crate::clock::now()),
        );
        let pod = |status: Value| {
            json!({"metadata": {"name": "p"},
                   "spec": {"containers": [{"name": "app"}]}, "status": status})
        };
        let crashing = pod(json!({"phase": "Running", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 3,
             "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ten_seconds_ago}}}]}));
        let cells = print_pod(&crashing);
        assert_eq!(
            (
                cells.ready.as_str(),
                cells.reason.as_str(),
                cells.restarts.as_str()
            ),
            ("0/1", "CrashLoopBackOff", "3 (10s ago)")
        );
        let unready = pod(json!({"phase": "Running", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0, "state": {"running": {}}}]}));
        let cells = print_pod(&unready);
        assert_eq!(
            (cells.ready.as_str(), cells.reason.as_str()),
            ("0/1", "Running")
        );
        let failed = pod(json!({"phase": "Failed", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0,
             "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}]}));
        assert_eq!(print_pod(&failed).reason, "Error");
        let no_reason = pod(json!({"phase": "Failed", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0,
             "state": {"terminated": {"exitCode": 3}}}]}));
        assert_eq!(print_pod(&no_reason).reason, "ExitCode:3");
        let pulling = pod(json!({"phase": "Pending", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0,
             "state": {"waiting": {"reason": "ErrImagePull"}}}]}));
        assert_eq!(print_pod(&pulling).reason, "ErrImagePull");
        let mut deleted = failed.clone();
        deleted["metadata"]["deletionTimestamp"] = json!(ten_seconds_ago);
        assert_eq!(
            print_pod(&deleted).reason,
            "Error",
            "a finished pod is not Terminating"
        );
        deleted["status"]["phase"] = json!("Running");
        assert_eq!(print_pod(&deleted).reason, "Terminating");
        let init = json!({"metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "setup"}], "containers": [{"name": "app"}]},
            "status": {"phase": "Pending",
                "initContainerStatuses": [{"name": "setup", "ready": false, "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
                "containerStatuses": [{"name": "app", "ready": false, "restartCount": 0,
                    "state": {"waiting": {"reason": "PodInitializing"}}}]}});
        let cells = print_pod(&init);
        assert_eq!(
            (cells.reason.as_str(), cells.restarts.as_str()),
            ("Init:CrashLoopBackOff", "2")
        );
    }
}
