//! Pod memory benchmark (issue 42, point 4): informers over real-shaped Pods, side by side
//! with kube-rs 5.
//!
//! `KUBEGEN_BENCH_SIZES=10000,100000 KUBEGEN_BENCH_ROUNDS=3 cargo bench -p kubegen --bench pods`
//! (sizes default to 10,000 and 100,000, rounds to 3: medians are reported, and rounds
//! alternate the workload order). `KUBEGEN_BENCH_WORKLOADS=kubegen,kube-rs` picks the
//! workloads; `KUBEGEN_BENCH_WORKERS=1` the workload's tokio worker threads (2 by default);
//! `KUBEGEN_BENCH_UPDATES=10000` caps the watch stream (one update per Pod by default).
//!
//! The parent process serves N Pods from the in-memory test server (a bare API server: no
//! scheduler, kubelets or workload controllers), written through its engine: 50 namespaces,
//! 20 ReplicaSets in each (the Pods' owners), and Pods of about 5 KiB of JSON each — labels
//! and annotations (a quarter carry `kubectl.kubernetes.io/last-applied-configuration`), an
//! owner reference, managedFields of `kube-controller-manager` (metadata and spec) and of
//! `kubelet` (status), two containers with env, ports, resources, probes and volume
//! mounts, volumes, a node out of 500, and a full status. The mean size and the share of
//! managedFields are printed once per size.
//!
//! Each workload runs in a child process of this binary, one at a time, so its peak RSS
//! (VmHWM) is its own: it syncs (peak RSS and RSS after the sync, sync wall time and CPU,
//! the CPU being user + system time of the whole process from /proc/self/stat), then the
//! parent writes one status update per Pod (a container restart, as a kubelet reports it)
//! and a label on the last Pod, and the child reports the CPU it spent on that stream
//! through its open watch, per event.
//!
//! * `kubegen`: a `SharedIndexInformer<Pod>` with the factory's defaults (the namespace
//!   index, a streaming list for the initial state), whole objects.
//! * `kubegen-list`: the same informer with a paged LIST for its initial state
//!   (`InitialListStrategy::ListWatch`): streaming against paged lists on this data.
//! * `kubegen-strip`: the `kubegen` informer over `ListWatch::strip(Strip::MANAGED_FIELDS)`:
//!   managedFields skipped while decoding.
//! * `kubegen-projection`: an informer of `PodView`, a `#[derive(kubegen::Projection)]` of
//!   metadata (without managedFields and the last-applied annotation), `spec.nodeName`
//!   and `status.phase`, decoded straight from the wire.
//! * `kubegen-compact` (on request): the `kubegen` informer with a transform that clones each
//!   object before it is cached (`*p = p.clone()`): a clone allocates every `Vec` at its
//!   length where the decoder's growth left slack, which is what kube-rs's store gets from
//!   the clone it keeps.
//! * `kube-rs`: kube-runtime's `watcher` + `reflector` store with their defaults, whole
//!   objects.
//! * `kube-rs-strip`: the same with the documented transform on the watcher stream,
//!   `.modify(|p| p.managed_fields_mut().clear())`.
//! * `kube-rs-projection`: the same with a `.modify()` that keeps metadata (managedFields
//!   and the last-applied annotation cleared), `spec.nodeName` and `status.phase` and
//!   clears the rest — what kube-rs users write today for a projection.
//! * `keep-floor`: fetch and decode the same pages (500 per page) into a `Vec<Pod>` of whole
//!   objects and keep them: the least any cache of whole objects can cost. Its watch phase
//!   decodes the same stream from a plain watch and replaces each Pod in the `Vec` (found
//!   through a name → slot map built after the sync report).
//!
//! The kubegen workloads go through one generic helper over `K: kubegen::Object` and any
//! `ListerWatcher<K>` (`kubegen_workload`), so a workload over another list-watch (managedFields
//! dropped while decoding) or a projected kind is one arm in `child`.
//!
//! Ratios: each workload against its kube-rs counterpart (the median of the per-round
//! ratios, rounds pair them), then every workload against kube-rs's default and against
//! the keep floor.
//!
//! Allocators (issue 42, point 7): the binary's global allocator is glibc malloc, mimalloc
//! or jemalloc as `KUBEGEN_BENCH_ALLOC=glibc|mimalloc|jemalloc` says (glibc by default; see
//! `kubegen-bench-alloc` for the cost of the dispatch). `KUBEGEN_BENCH_ALLOCS=glibc,mimalloc,jemalloc`
//! runs every workload under each of them in the same rounds (the parent, the test server,
//! keeps its own `KUBEGEN_BENCH_ALLOC`).
//!
//! As a smoke test (`cargo test -p kubegen --bench pods`, the test profile: the binary runs
//! without `--bench`) it runs one round of every workload at 10,000 Pods (or
//! `KUBEGEN_BENCH_SIZES`) with a stream of 1,000 updates and no warm-up, checks that each
//! synced every Pod and saw the stream's end, and prints the table without judging it.
//!
//! Wall times depend on the machine's load; the CPU columns are steadier. An unreported
//! keep-floor run warms the server up first, so the order of the workloads does not favour
//! any of them.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use futures::{Stream, StreamExt};
use k8s_openapi::{
    api::core::v1::{Pod, PodSpec, PodStatus},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube_core::{
    WatchEvent,
    params::{ListParams, WatchParams},
};
use kubegen::{
    cache::{
        InitialListStrategy, ListWatch, ListerWatcher, ReflectorConfig, SharedIndexInformer,
        namespace_indexers,
    },
    client::{LAST_APPLIED_ANNOTATION, ResourceClient, Strip},
};
use kubegen_testserver::{
    ClusterConfig, EngineConfig, TestServer,
    bench::{Target, WriteOptions, collection},
};
use serde_json::{Map, Value, json};
use support::{
    ChildProcess, Line, kube_rs_client, kubegen_client, median, mib, ratio_spread, report,
    round_order, run_until_synced, stream_done, wait_for_parent, wait_until,
};

#[global_allocator]
static ALLOC: kubegen_bench_alloc::Dispatch = kubegen_bench_alloc::Dispatch;

const NAMESPACES: usize = 50;
const APPS_PER_NAMESPACE: usize = 20;
const NODES: usize = 500;
const APPS: [&str; APPS_PER_NAMESPACE] = [
    "checkout",
    "payments",
    "catalog",
    "search",
    "cart",
    "auth",
    "gateway",
    "orders",
    "inventory",
    "shipping",
    "notifications",
    "recommendations",
    "reviews",
    "pricing",
    "users",
    "sessions",
    "media",
    "billing",
    "reports",
    "analytics",
];
/// The workloads run by default (and by the smoke test).
const WORKLOADS: &str = "kubegen,kubegen-list,kubegen-strip,kubegen-projection,kube-rs,kube-rs-strip,kube-rs-projection,keep-floor";

// ---------------------------------------------------------------------------------------
// The Pods.

/// splitmix64: the per-Pod variation (names, hashes, IPs) is a pure function of the index.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn hex64(seed: u64) -> String {
    (0..4).map(|k| format!("{:016x}", mix(seed ^ k))).collect()
}

/// `len` characters of the alphabet Kubernetes uses for generated suffixes, from `x`.
fn suffix(mut x: u64, len: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..len)
        .map(|_| {
            let c = ALPHABET[(x % ALPHABET.len() as u64) as usize];
            x /= ALPHABET.len() as u64;
            c as char
        })
        .collect()
}

fn namespace(i: usize) -> String {
    format!("team-{:02}", i % NAMESPACES)
}

/// The ReplicaSet (index within the namespace) that owns Pod `i`.
fn app_of(i: usize) -> usize {
    (i / NAMESPACES) % APPS_PER_NAMESPACE
}

fn template_hash(ns: usize, app: usize) -> String {
    suffix(mix((ns * APPS_PER_NAMESPACE + app) as u64), 10)
}

fn replica_set_name(ns: usize, app: usize) -> String {
    format!("{}-{}", APPS[app], template_hash(ns, app))
}

/// Pod `i`'s namespace and name (unique: the suffix encodes `i`).
fn pod_key(i: usize) -> (String, String) {
    let (ns, app) = (i % NAMESPACES, app_of(i));
    let name = format!("{}-{}", replica_set_name(ns, app), suffix(i as u64, 5));
    (namespace(i), name)
}

/// The Pod whose label ends a stream (the last one).
fn marker_key(n: usize) -> String {
    let (ns, name) = pod_key(n - 1);
    format!("{ns}/{name}")
}

fn node_name(i: usize) -> String {
    let node = (i * 7919 + i / 3) % NODES;
    format!(
        "ip-10-12-{}-{}.eu-west-1.compute.internal",
        node / 250,
        node % 250 + 4
    )
}

fn host_ip(i: usize) -> String {
    let node = (i * 7919 + i / 3) % NODES;
    format!("10.12.{}.{}", node / 250, node % 250 + 4)
}

fn pod_ip(i: usize) -> String {
    format!("10.{}.{}.{}", 64 + i / 62_500, (i / 250) % 250, i % 250 + 2)
}

fn timestamp(seed: u64, minute_offset: u64) -> String {
    let t = mix(seed) % (28 * 24 * 60) + minute_offset;
    let (day, hour, minute) = (t / (24 * 60) + 1, (t / 60) % 24, t % 60);
    format!("2026-03-{day:02}T{hour:02}:{minute:02}:{:02}Z", seed % 60)
}

fn labels(i: usize) -> Value {
    let (ns, app) = (i % NAMESPACES, app_of(i));
    let mut labels = Map::new();
    for (k, v) in [
        ("app.kubernetes.io/name", APPS[app].to_owned()),
        (
            "app.kubernetes.io/version",
            format!("1.{}.{}", app % 7, ns % 13),
        ),
        ("pod-template-hash", template_hash(ns, app)),
        ("tier", ["backend", "frontend", "batch"][app % 3].to_owned()),
    ] {
        labels.insert(k.to_owned(), Value::String(v));
    }
    Value::Object(labels)
}

fn image(app: usize) -> String {
    format!(
        "registry.example.com/shop/{}:1.{}.{}",
        APPS[app],
        app % 7,
        app % 5
    )
}

/// `template` with every `${NAME}` replaced by `vars`' value for NAME. (JSON text filled in
/// and parsed, rather than `json!` literals: those made this file take minutes to compile.)
fn subst(template: &str, vars: &[(&str, &str)]) -> Value {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = at + rest[at..].find('}').unwrap();
        let name = &rest[at + 2..end];
        let value = vars.iter().find(|(k, _)| *k == name).unwrap().1;
        out.push_str(value);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    serde_json::from_str(&out).unwrap()
}

/// A Deployment's Pod spec as kube-controller-manager writes it (defaulted), two
/// containers: the app and an Envoy sidecar.
const SPEC: &str = r#"{
  "volumes": [
    {"name": "config", "configMap": {"name": "${APP}-config", "defaultMode": 420}}
  ],
  "containers": [
    {"name": "${APP}", "image": "${IMAGE}",
     "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
     "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
             {"name": "LOG_LEVEL", "value": "${LOG}"}],
     "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
     "volumeMounts": [{"name": "config", "readOnly": true, "mountPath": "/etc/${APP}"}],
     "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                       "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
     "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
                        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
     "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
     "imagePullPolicy": "IfNotPresent"},
    {"name": "envoy", "image": "docker.io/envoyproxy/envoy:v1.31.2",
     "env": [{"name": "ENVOY_LOG_LEVEL", "value": "warn"}],
     "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
     "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
     "imagePullPolicy": "IfNotPresent"}
  ],
  "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
  "nodeName": "${NODE}",
  "securityContext": {}, "schedulerName": "default-scheduler", "enableServiceLinks": true
}"#;

/// A running Pod's status as its kubelet reports it.
const STATUS: &str = r#"{
  "phase": "Running",
  "conditions": [
    {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": "${T2}"},
    {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": "${T2}"},
    {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "${T0}"}],
  "hostIP": "${HOST_IP}",
  "podIP": "${POD_IP}", "podIPs": [{"ip": "${POD_IP}"}],
  "startTime": "${T0}",
  "containerStatuses": [
    {"name": "${APP}", "state": {"running": {"startedAt": "${T1}"}}, "ready": true,
     "restartCount": 0, "image": "${IMAGE}", "imageID": "registry.example.com/shop/${APP}@sha256:${IMAGE_SHA}",
     "containerID": "containerd://${CONTAINER_1}", "started": true},
    {"name": "envoy", "state": {"running": {"startedAt": "${T1}"}}, "ready": true,
     "restartCount": 0, "image": "docker.io/envoyproxy/envoy:v1.31.2",
     "imageID": "docker.io/envoyproxy/envoy@sha256:${ENVOY_SHA}",
     "containerID": "containerd://${CONTAINER_2}", "started": true}],
  "qosClass": "Burstable"
}"#;

/// Pod `i`'s spec (see [`SPEC`]).
fn spec(i: usize) -> Value {
    let app = app_of(i);
    subst(
        SPEC,
        &[
            ("APP", APPS[app]),
            ("IMAGE", &image(app)),
            ("LOG", ["info", "debug"][usize::from(i.is_multiple_of(10))]),
            ("NODE", &node_name(i)),
        ],
    )
}

/// Pod `i`'s status (see [`STATUS`]); `restarts` is the app container's restart count (what
/// the stream's updates change).
fn status(i: usize, restarts: usize) -> Value {
    let app = app_of(i);
    let seed = i as u64;
    let mut status = subst(
        STATUS,
        &[
            ("APP", APPS[app]),
            ("IMAGE", &image(app)),
            ("T0", &timestamp(seed, 0)),
            ("T1", &timestamp(seed, 1)),
            ("T2", &timestamp(seed, 2)),
            ("HOST_IP", &host_ip(i)),
            ("POD_IP", &pod_ip(i)),
            ("IMAGE_SHA", &hex64(app as u64)),
            ("ENVOY_SHA", &hex64(7)),
            ("CONTAINER_1", &hex64(seed * 2)),
            ("CONTAINER_2", &hex64(seed * 2 + 1)),
        ],
    );
    status["containerStatuses"][0]["restartCount"] = json!(restarts);
    status
}

/// A structured-merge-diff `fieldsV1` set of every field under `v` (lists of objects keyed
/// as kube-apiserver keys them: by name, port and protocol, type, ip or mount path).
fn fields_v1(v: &Value) -> Value {
    /// The key of an item of an associative list; `None` for an atomic list's items
    /// (tolerations, containerStatuses).
    fn key_of(item: &Map<String, Value>) -> Option<String> {
        let keys: &[&str] = if item.contains_key("containerID") {
            return None; // containerStatuses: an atomic list
        } else if item.contains_key("containerPort") {
            &["containerPort", "protocol"]
        } else if item.contains_key("mountPath") {
            &["mountPath"]
        } else if item.contains_key("uid") {
            &["uid"]
        } else if item.contains_key("name") {
            &["name"]
        } else if item.contains_key("type") {
            &["type"]
        } else if item.contains_key("ip") {
            &["ip"]
        } else {
            return None;
        };
        let key: Map<String, Value> = keys
            .iter()
            .map(|k| ((*k).to_owned(), item[*k].clone()))
            .collect();
        Some(format!("k:{}", Value::Object(key)))
    }
    fn set(v: &Value, top: bool) -> Value {
        let mut out = Map::new();
        match v {
            Value::Object(m) => {
                if !top {
                    out.insert(".".into(), json!({}));
                }
                for (k, child) in m {
                    out.insert(format!("f:{k}"), set(child, false));
                }
            }
            Value::Array(items) => {
                let keyed: Option<Vec<String>> =
                    items.iter().map(|item| key_of(item.as_object()?)).collect();
                if let Some(keys) = keyed.filter(|k| !k.is_empty()) {
                    out.insert(".".into(), json!({}));
                    for (key, item) in keys.into_iter().zip(items) {
                        out.insert(key, set(item, false));
                    }
                }
            }
            _ => {}
        }
        Value::Object(out)
    }
    set(v, true)
}

/// Pod `i` as created (no status: the server sets `Pending`; [`status`] follows through
/// `/status`), owned by the ReplicaSet with `owner_uid`.
/// A JSON object of `fields` (a function rather than `json!`, which compiles slowly).
fn obj<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn string(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

/// Pod `i` as created (no status: the server sets `Pending`; [`status`] follows through
/// `/status`), owned by the ReplicaSet with `owner_uid`.
fn pod(i: usize, owner_uid: &str) -> Value {
    let (ns, name) = pod_key(i);
    let app = app_of(i);
    let rs = replica_set_name(i % NAMESPACES, app);
    let labels = labels(i);
    let spec = spec(i);
    let mut annotations = obj([
        ("prometheus.io/scrape", string("true")),
        ("prometheus.io/port", string("9090")),
        (
            "kubectl.kubernetes.io/restartedAt",
            string(timestamp(app as u64, 0)),
        ),
        ("kubectl.kubernetes.io/default-container", string(APPS[app])),
    ]);
    if i.is_multiple_of(4) {
        // What `kubectl apply` leaves on an object: the applied manifest, compact.
        let containers: Vec<Value> = spec["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| obj([("name", c["name"].clone()), ("image", c["image"].clone())]))
            .collect();
        let applied = obj([
            ("apiVersion", string("v1")),
            ("kind", string("Pod")),
            (
                "metadata",
                obj([
                    ("annotations", json!({})),
                    ("labels", labels.clone()),
                    ("name", string(&name)),
                    ("namespace", string(&ns)),
                ]),
            ),
            ("spec", obj([("containers", Value::Array(containers))])),
        ]);
        annotations["kubectl.kubernetes.io/last-applied-configuration"] =
            string(format!("{applied}\n"));
    }
    let owner = obj([
        ("apiVersion", string("apps/v1")),
        ("kind", string("ReplicaSet")),
        ("name", string(&rs)),
        ("uid", string(owner_uid)),
        ("controller", Value::Bool(true)),
        ("blockOwnerDeletion", Value::Bool(true)),
    ]);
    // kube-controller-manager wrote the Pod (metadata and spec), the kubelet its status.
    let kcm_fields = fields_v1(&obj([
        (
            "metadata",
            obj([
                ("generateName", Value::Null),
                ("labels", labels.clone()),
                ("ownerReferences", json!([{"uid": owner_uid}])),
            ]),
        ),
        ("spec", spec.clone()),
    ]));
    let kubelet_fields = fields_v1(&obj([("status", status(i, 0))]));
    let entry = |manager: &str, time: String, fields: Value| {
        obj([
            ("manager", string(manager)),
            ("operation", string("Update")),
            ("apiVersion", string("v1")),
            ("time", string(time)),
            ("fieldsType", string("FieldsV1")),
            ("fieldsV1", fields),
        ])
    };
    let mut kubelet = entry("kubelet", timestamp(i as u64, 2), kubelet_fields);
    kubelet["subresource"] = string("status");
    let metadata = obj([
        ("name", string(name)),
        ("generateName", string(format!("{rs}-"))),
        ("namespace", string(ns)),
        ("labels", labels),
        ("annotations", annotations),
        ("ownerReferences", Value::Array(vec![owner])),
        (
            "managedFields",
            Value::Array(vec![
                entry(
                    "kube-controller-manager",
                    timestamp(i as u64, 0),
                    kcm_fields,
                ),
                kubelet,
            ]),
        ),
    ]);
    obj([
        ("apiVersion", string("v1")),
        ("kind", string("Pod")),
        ("metadata", metadata),
        ("spec", spec),
    ])
}

fn replica_set(ns: usize, app: usize) -> Value {
    let labels = obj([
        ("app.kubernetes.io/name", string(APPS[app])),
        ("pod-template-hash", string(template_hash(ns, app))),
    ]);
    let container = obj([("name", string(APPS[app])), ("image", string(image(app)))]);
    let template = obj([
        ("metadata", obj([("labels", labels.clone())])),
        ("spec", obj([("containers", Value::Array(vec![container]))])),
    ]);
    obj([
        ("apiVersion", string("apps/v1")),
        ("kind", string("ReplicaSet")),
        (
            "metadata",
            obj([
                ("name", string(replica_set_name(ns, app))),
                ("namespace", string(namespace(ns))),
                ("labels", labels.clone()),
            ]),
        ),
        (
            "spec",
            obj([
                ("replicas", json!(100)),
                ("selector", obj([("matchLabels", labels)])),
                ("template", template),
            ]),
        ),
    ])
}

const PODS: (&str, &str, &str) = ("", "v1", "pods");

fn pod_target(server: &TestServer, i: usize, subresource: Option<&str>) -> Target {
    let (ns, name) = pod_key(i);
    Target {
        name: Some(name),
        subresource: subresource.map(Into::into),
        ..collection(server, PODS, Some(&ns))
    }
}

/// Namespaces, ReplicaSets and `n` Pods with their status; prints the Pods' mean JSON size
/// and managedFields' share of it.
fn fill(server: &TestServer, n: usize) {
    let engine = server.engine();
    let opts = WriteOptions::default();
    let mut owners = Vec::new();
    for ns in 0..NAMESPACES {
        let body =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace(ns)}});
        engine
            .create(
                &collection(server, ("", "v1", "namespaces"), None),
                body,
                &opts,
            )
            .unwrap();
        for app in 0..APPS_PER_NAMESPACE {
            let rs = engine
                .create(
                    &collection(server, ("apps", "v1", "replicasets"), Some(&namespace(ns))),
                    replica_set(ns, app),
                    &opts,
                )
                .unwrap();
            owners.push(rs["metadata"]["uid"].as_str().unwrap().to_owned());
        }
    }
    let (mut bytes, mut managed) = (0, 0);
    for i in 0..n {
        let owner = &owners[(i % NAMESPACES) * APPS_PER_NAMESPACE + app_of(i)];
        let (ns, _) = pod_key(i);
        engine
            .create(&collection(server, PODS, Some(&ns)), pod(i, owner), &opts)
            .unwrap();
        let stored = engine
            .update(
                &pod_target(server, i, Some("status")),
                json!({"status": status(i, 0)}),
                &opts,
            )
            .unwrap();
        bytes += serde_json::to_vec(&*stored).unwrap().len();
        managed += serde_json::to_vec(&stored["metadata"]["managedFields"])
            .unwrap()
            .len();
    }
    println!(
        "{n} Pods: {:.2} KiB of JSON per Pod on average, managedFields {:.0}% of it",
        bytes as f64 / n as f64 / 1024.0,
        100.0 * managed as f64 / bytes as f64
    );
}

/// The stream: a status update of each of the first `updates` Pods (the app container's
/// restart count becomes `run`), then the `stream=<done>` label on the last Pod.
fn stream(server: &TestServer, n: usize, updates: usize, run: usize, done: &str) {
    let engine = server.engine();
    let opts = WriteOptions::default();
    for i in 0..updates {
        engine
            .update(
                &pod_target(server, i, Some("status")),
                json!({"status": status(i, run)}),
                &opts,
            )
            .unwrap();
    }
    let marker = pod_target(server, n - 1, None);
    let mut last = (*engine.get(&marker).unwrap()).clone();
    last["metadata"]["labels"]["stream"] = json!(done);
    engine.update(&marker, last, &opts).unwrap();
}

// ---------------------------------------------------------------------------------------
// The workloads (child processes).

/// Reports the sync, waits for the stream's go-ahead and reports when `done(label)` holds.
async fn watch_phase(secs: f64, done: impl Fn(&str) -> bool) {
    report("synced", secs);
    report("watching", 0.0);
    println!("ready");
    let label = wait_for_parent();
    report("streamed", wait_until(|| done(&label)).await);
}

/// A kubegen informer with the factory's defaults (the namespace index) over `lw`, its
/// initial state by `initial_list`: sync, then the stream.
async fn kubegen_workload<K: kubegen::Object>(
    lw: impl ListerWatcher<K>,
    initial_list: InitialListStrategy,
    n: usize,
) {
    kubegen_workload_with(lw, initial_list, n, None).await;
}

/// [`kubegen_workload`] with a transform applied to every object before it is cached.
async fn kubegen_workload_with<K: kubegen::Object>(
    lw: impl ListerWatcher<K>,
    initial_list: InitialListStrategy,
    n: usize,
    transform: Option<kubegen::cache::TransformFunc<K>>,
) {
    let mut builder = SharedIndexInformer::builder(lw)
        .indexers(namespace_indexers())
        .reflector(ReflectorConfig {
            initial_list,
            ..ReflectorConfig::default()
        });
    if let Some(transform) = transform {
        builder = builder.transform(transform);
    }
    let informer = builder.build();
    let (informer, stop, secs) = run_until_synced(informer, n).await;
    let marker = marker_key(n);
    watch_phase(secs, |label| {
        informer
            .indexer()
            .get_by_key(&marker)
            .is_some_and(|p| stream_done(p.as_ref(), label))
    })
    .await;
    stop.cancel();
}

/// kube-runtime's reflector over `events` (a watcher stream, transformed or not): sync,
/// then the stream.
async fn kube_rs_workload<S>(
    store: kube::runtime::reflector::Store<Pod>,
    writer: kube::runtime::reflector::store::Writer<Pod>,
    events: S,
    n: usize,
) where
    S: Stream<Item = Result<kube::runtime::watcher::Event<Pod>, kube::runtime::watcher::Error>>
        + Send
        + 'static,
{
    use kube::runtime::{WatchStreamExt, reflector};
    let stream = reflector(writer, events).default_backoff();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    let start = Instant::now();
    store.wait_until_ready().await.unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(store.len(), n);
    let (ns, name) = pod_key(n - 1);
    let marker = reflector::ObjectRef::<Pod>::new(&name).within(&ns);
    watch_phase(secs, |label| {
        store
            .get(&marker)
            .is_some_and(|p| stream_done(p.as_ref(), label))
    })
    .await;
    task.abort();
}

/// What kube-rs users write for a projection: metadata (without managedFields),
/// `spec.nodeName` and `status.phase`; everything else cleared.
/// What `kubegen-projection` caches of a Pod.
#[derive(Clone, Debug, kubegen::Projection)]
#[projection(of = Pod)]
struct PodView {
    metadata: ObjectMeta,
    #[projection(path = "spec.nodeName")]
    node_name: Option<String>,
    #[projection(path = "status.phase")]
    phase: Option<String>,
}

/// What interning (issue 42, point 3) would save in `n` cached `PodView`s: label and
/// annotation keys, namespaces and owner kinds and apiVersions as shared `Arc<str>`s
/// instead of a `String` each. Counted, not run: k8s-openapi's `ObjectMeta` (which
/// `kube_core::Resource::meta` returns, so every cached kind carries one) owns a `String`
/// per key. Heap sizes follow glibc's chunks (the request plus 8 bytes, rounded up to 16,
/// at least 32); an `Arc<str>` is 8 bytes smaller than a `String` inline and its one
/// shared allocation carries two 8-byte counts.
fn interning_estimate(n: usize) {
    fn chunk(len: usize) -> usize {
        if len == 0 {
            0
        } else {
            (len + 8).div_ceil(16).max(2) * 16
        }
    }
    let mut unique = std::collections::HashSet::new();
    let (mut instances, mut bytes_now, mut projected) = (0usize, 0usize, 0usize);
    for i in 0..n {
        let view: PodView =
            serde_json::from_value(pod(i, "00000000-0000-0000-0000-000000000000")).unwrap();
        let m = &view.metadata;
        let label_keys = m.labels.iter().flatten().map(|(k, _)| k.as_str());
        let annotation_keys = m.annotations.iter().flatten().map(|(k, _)| k.as_str());
        let owners = m
            .owner_references
            .iter()
            .flatten()
            .flat_map(|o| [o.kind.as_str(), o.api_version.as_str()]);
        for s in label_keys
            .chain(annotation_keys)
            .chain(m.namespace.as_deref())
            .chain(owners)
        {
            instances += 1;
            bytes_now += chunk(s.len());
            unique.insert(s.to_owned());
        }
        projected += serde_json::to_vec(&view).unwrap().len();
    }
    let shared: usize = unique.iter().map(|s| chunk(s.len() + 16)).sum();
    let saved = (bytes_now + 8 * instances).saturating_sub(shared);
    println!(
        "interning estimate at {n}: {} strings per Pod ({} distinct in all) hold {:.0} B of heap \
         per Pod; as shared Arc<str>s they would save {:.0} B per Pod ({:.1} MiB in all; the \
         projection's JSON is {:.0} B per Pod)",
        instances / n.max(1),
        unique.len(),
        bytes_now as f64 / n as f64,
        saved as f64 / n as f64,
        saved as f64 / (1024.0 * 1024.0),
        projected as f64 / n as f64,
    );
}

/// kube-rs's best equivalent of [`PodView`]: the same fields kept, the rest cleared.
fn project(pod: &mut Pod) {
    pod.metadata.managed_fields = None;
    if let Some(annotations) = pod.metadata.annotations.as_mut() {
        annotations.remove(LAST_APPLIED_ANNOTATION);
    }
    pod.spec = pod.spec.take().map(|spec| PodSpec {
        node_name: spec.node_name,
        ..PodSpec::default()
    });
    pod.status = pod.status.take().map(|status| PodStatus {
        phase: status.phase,
        ..PodStatus::default()
    });
}

/// The least a cache of whole objects can cost: every page decoded into one `Vec<Pod>`
/// (allocated once, for `n`), kept; then the stream decoded from a plain watch, each Pod
/// replacing its slot.
async fn keep_floor(url: &str, n: usize) {
    let api = ResourceClient::<Pod>::all(kubegen_client(url));
    let start = Instant::now();
    let mut pods: Vec<Pod> = Vec::with_capacity(n);
    let mut params = ListParams::default().limit(500);
    let mut rv = None;
    loop {
        let page = api.list(&params).await.unwrap();
        rv = rv.or(page.metadata.resource_version);
        pods.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params.continue_token = Some(token),
            None => break,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(pods.len(), n);
    report("synced", secs);
    let key = |p: &Pod| {
        format!(
            "{}/{}",
            p.metadata.namespace.as_deref().unwrap_or_default(),
            p.metadata.name.as_deref().unwrap_or_default()
        )
    };
    let slots: HashMap<String, usize> = pods.iter().enumerate().map(|(i, p)| (key(p), i)).collect();
    let mut events = api
        .watch(&WatchParams::default().timeout(290), &rv.unwrap())
        .await
        .unwrap();
    report("watching", 0.0);
    println!("ready");
    let label = wait_for_parent();
    let start = Instant::now();
    while let Some(event) = events.next().await {
        if let WatchEvent::Modified(pod) = event.unwrap() {
            let done = stream_done(&pod, &label);
            let slot = slots[&key(&pod)];
            pods[slot] = pod;
            if done {
                break;
            }
        }
    }
    report("streamed", start.elapsed().as_secs_f64());
    assert_eq!(pods.len(), n);
}

async fn child(workload: &str, url: &str, n: usize) {
    use kube::{
        ResourceExt,
        runtime::{WatchStreamExt, reflector, watcher},
    };
    let pods = || ListWatch::new(ResourceClient::<Pod>::all(kubegen_client(url)));
    let kube_rs = || {
        let api: kube::Api<Pod> = kube::Api::all(kube_rs_client(url));
        let (store, writer) = reflector::store();
        (store, writer, watcher(api, watcher::Config::default()))
    };
    match workload {
        // Whole objects, a streaming list (the default) or a paged LIST for the initial state.
        "kubegen" => kubegen_workload(pods(), InitialListStrategy::StreamingList, n).await,
        "kubegen-list" => kubegen_workload(pods(), InitialListStrategy::ListWatch, n).await,
        // Whole objects, each cloned once before it is cached: a clone allocates every
        // `Vec` at its length, where the decoder's growth left up to twice that (kube-rs's
        // store keeps clones, too).
        "kubegen-compact" => {
            let compact: kubegen::cache::TransformFunc<Pod> =
                std::sync::Arc::new(|p: &mut Pod| *p = p.clone());
            kubegen_workload_with(pods(), InitialListStrategy::StreamingList, n, Some(compact))
                .await;
        }
        // Whole objects without managedFields, dropped while decoding.
        "kubegen-strip" => {
            let lw = pods().strip(Strip::MANAGED_FIELDS);
            kubegen_workload(lw, InitialListStrategy::StreamingList, n).await;
        }
        // The projection: metadata (without managedFields and the last-applied
        // annotation), nodeName and phase, decoded straight from the wire.
        "kubegen-projection" => {
            let lw = ListWatch::new(ResourceClient::<PodView>::all(kubegen_client(url)));
            kubegen_workload(lw, InitialListStrategy::StreamingList, n).await;
        }
        "kube-rs" => {
            let (store, writer, events) = kube_rs();
            kube_rs_workload(store, writer, events, n).await;
        }
        "kube-rs-strip" => {
            let (store, writer, events) = kube_rs();
            let events = events.modify(|p| p.managed_fields_mut().clear());
            kube_rs_workload(store, writer, events, n).await;
        }
        "kube-rs-projection" => {
            let (store, writer, events) = kube_rs();
            kube_rs_workload(store, writer, events.modify(project), n).await;
        }
        "keep-floor" => keep_floor(url, n).await,
        other => panic!("unknown workload {other}"),
    }
}

// ---------------------------------------------------------------------------------------
// The parent.

#[derive(Clone, Copy, Debug)]
struct Measured {
    sync_secs: f64,
    sync_cpu_ms: u64,
    sync_peak_kib: u64,
    steady_kib: u64,
    stream_secs: f64,
    /// CPU per watch event, in microseconds.
    watch_us: f64,
}

impl Measured {
    fn median(runs: &[Measured]) -> Measured {
        let mid = |f: fn(&Measured) -> f64| median(runs.iter().map(f));
        Measured {
            sync_secs: mid(|m| m.sync_secs),
            sync_cpu_ms: median(runs.iter().map(|m| m.sync_cpu_ms)),
            sync_peak_kib: median(runs.iter().map(|m| m.sync_peak_kib)),
            steady_kib: median(runs.iter().map(|m| m.steady_kib)),
            stream_secs: mid(|m| m.stream_secs),
            watch_us: mid(|m| m.watch_us),
        }
    }
}

/// What a run measures: a workload under an allocator (`None`: the parent's).
#[derive(Clone)]
struct Unit {
    workload: String,
    alloc: Option<String>,
}

impl Unit {
    fn label(&self) -> String {
        match &self.alloc {
            Some(alloc) => format!("{} [{alloc}]", self.workload),
            None => self.workload.clone(),
        }
    }
}

/// The kube-rs workload a workload is held against.
fn counterpart(workload: &str) -> &'static str {
    match workload {
        "kubegen-strip" => "kube-rs-strip",
        "kubegen-projection" => "kube-rs-projection",
        _ => "kube-rs",
    }
}

fn run_child(server: &TestServer, unit: &Unit, n: usize, updates: usize, run: usize) -> Measured {
    let env: Vec<(&str, &str)> = unit
        .alloc
        .as_deref()
        .map(|a| (kubegen_bench_alloc::ENV, a))
        .into_iter()
        .collect();
    let mut child = ChildProcess::spawn_with_env(&unit.workload, &server.url(), n, &env);
    let synced = child.expect("synced");
    let watching: Line = child.expect("watching");
    child.expect("ready");
    // Let the watch settle (as the informer bench does) before the stream starts.
    std::thread::sleep(Duration::from_millis(300));
    let done = format!("done-{run}");
    child.go(&done);
    stream(server, n, updates, run, &done);
    let streamed = child.expect("streamed");
    Measured {
        sync_secs: synced.secs,
        sync_cpu_ms: synced.cpu,
        sync_peak_kib: synced.hwm,
        steady_kib: synced.rss,
        stream_secs: streamed.secs,
        watch_us: streamed.cpu.saturating_sub(watching.cpu) as f64 * 1000.0 / (updates + 1) as f64,
    }
}

fn main() {
    kubegen_bench_alloc::check_env();
    let args: Vec<String> = std::env::args().collect();
    if support::run_child_args(&args, |workload, url, n| async move {
        child(&workload, &url, n).await;
    }) {
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list`: nothing to list.
    }
    // `cargo bench` passes `--bench`; `cargo test --bench pods` (the test profile) does not:
    // then this is the smoke test.
    let smoke = !args.iter().any(|a| a == "--bench");
    let sizes = support::env_sizes(if smoke { &[10_000] } else { &[10_000, 100_000] });
    let rounds = if smoke { 1 } else { support::env_rounds(3) };
    let workloads = support::env_workloads(WORKLOADS);
    let allocs: Vec<Option<String>> = match std::env::var("KUBEGEN_BENCH_ALLOCS") {
        Ok(list) => list
            .split(',')
            .map(|a| {
                let a = a.trim();
                assert!(
                    kubegen_bench_alloc::Choice::from_name(a.as_bytes()).is_some(),
                    "KUBEGEN_BENCH_ALLOCS names {a}: none of glibc, mimalloc, jemalloc"
                );
                Some(a.to_owned())
            })
            .collect(),
        Err(_) => vec![None],
    };
    let units: Vec<Unit> = workloads
        .iter()
        .flat_map(|w| {
            allocs.iter().map(|a| Unit {
                workload: w.clone(),
                alloc: a.clone(),
            })
        })
        .collect();
    let rt = support::server_runtime();
    println!(
        "allocator: {} (children: {})",
        kubegen_bench_alloc::chosen().name(),
        std::env::var("KUBEGEN_BENCH_ALLOCS").unwrap_or_else(|_| "the same".into())
    );
    let mut run = 0;
    for &n in &sizes {
        let server = rt.block_on(async {
            TestServer::builder()
                .cluster(ClusterConfig::none())
                .engine_config(EngineConfig::default().history_limit(1_000))
                .start()
                .await
                .unwrap()
        });
        let start = Instant::now();
        fill(&server, n);
        println!("filled in {:.1} s", start.elapsed().as_secs_f64());
        interning_estimate(n);
        // KUBEGEN_BENCH_UPDATES caps the stream (every Pod once by default; 1,000 in the smoke).
        let updates = match std::env::var("KUBEGEN_BENCH_UPDATES") {
            Ok(v) => v.parse::<usize>().unwrap().min(n),
            Err(_) if smoke => n.min(1_000),
            Err(_) => n,
        };
        let _guard = rt.enter();
        if !smoke {
            // Warm-up (not reported): the server's first full list and first round of
            // updates are slower (its heap grows), which would penalise the first workload.
            run += 1;
            let floor = Unit {
                workload: "keep-floor".into(),
                alloc: None,
            };
            run_child(&server, &floor, n, updates, run);
        }
        let mut results: Vec<Vec<Measured>> = units.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for i in round_order(units.len(), round) {
                run += 1;
                results[i].push(run_child(&server, &units[i], n, updates, run));
            }
        }
        print_table(n, updates, &units, &results);
        drop(server);
    }
}

fn print_table(n: usize, updates: usize, units: &[Unit], results: &[Vec<Measured>]) {
    let runs_of = |workload: &str, alloc: &Option<String>| {
        units
            .iter()
            .position(|u| u.workload == workload && &u.alloc == alloc)
            .map(|i| &results[i])
    };
    let ratios = |ours: &[Measured], theirs: Option<&Vec<Measured>>| {
        let Some(theirs) = theirs else {
            return ["—".to_owned(), "—".to_owned(), "—".to_owned()];
        };
        [
            ratio_spread(ours, theirs, |m| m.sync_peak_kib as f64),
            ratio_spread(ours, theirs, |m| m.sync_cpu_ms as f64),
            ratio_spread(ours, theirs, |m| m.watch_us),
        ]
    };
    println!();
    println!(
        "{n} Pods, {updates} updates streamed, median of {} round(s); ratios: median (min–max) of the per-round ratios",
        results.first().map_or(0, Vec::len)
    );
    println!(
        "| workload | peak RSS after sync | RSS after sync | sync wall | sync CPU | watch CPU / event | vs | peak RSS ratio | sync CPU ratio | watch CPU ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (unit, runs) in units.iter().zip(results) {
        let m = Measured::median(runs);
        let against = counterpart(&unit.workload);
        let theirs = runs_of(against, &unit.alloc).filter(|_| unit.workload != against);
        let [rss, cpu, watch] = ratios(runs, theirs);
        println!(
            "| {} | {:.0} MiB | {:.0} MiB | {:.2} s | {:.2} s | {:.1} µs | {against} | {rss} | {cpu} | {watch} |",
            unit.label(),
            mib(m.sync_peak_kib),
            mib(m.steady_kib),
            m.sync_secs,
            m.sync_cpu_ms as f64 / 1000.0,
            m.watch_us,
        );
    }
    println!();
    println!(
        "| workload | peak RSS / kube-rs | sync CPU / kube-rs | peak RSS / keep floor | sync CPU / keep floor |"
    );
    println!("|---|---|---|---|---|");
    for (unit, runs) in units.iter().zip(results) {
        let [rss, cpu, _] = ratios(runs, runs_of("kube-rs", &unit.alloc));
        let [floor_rss, floor_cpu, _] = ratios(runs, runs_of("keep-floor", &unit.alloc));
        println!(
            "| {} | {rss} | {cpu} | {floor_rss} | {floor_cpu} |",
            unit.label()
        );
    }
}
