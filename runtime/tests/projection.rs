//! Projections (`#[derive(kubegen::Projection)]`) and decode-time stripping
//! (`kubegen::client::Strip`) against the test server: decoding never builds the whole
//! object, and informers, listers, indexes, read clients and controllers serve projections
//! as they serve whole kinds.
#![allow(clippy::unwrap_used)]

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::ReplicaSet,
        core::v1::{ConfigMap, Pod},
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kube_core::params::{ListParams, PostParams};
use kubegen::{
    cache::{Indexers, ListWatch, SharedIndexInformer, UnstartedInformer},
    client::{Client, ReadClient, ResourceClient, Strip},
    projection::Projection,
};
use kubegen_testserver::TestServer;

mod informer_support;
use informer_support::{eventually, server_and_client};

const WAIT: Duration = Duration::from_secs(10);
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Where a Pod runs and how far it got.
#[derive(Clone, Debug, PartialEq, kubegen::Projection)]
#[projection(of = Pod)]
struct PodPlacement {
    metadata: ObjectMeta,
    #[projection(path = "spec.nodeName")]
    node_name: Option<String>,
    #[projection(path = "status.phase")]
    phase: Option<String>,
    #[projection(path = "status.podIPs")]
    pod_ips: Option<Vec<k8s_openapi::api::core::v1::PodIP>>,
}

/// A projection of a cluster-scoped kind, keeping managedFields.
#[derive(Clone, Debug, kubegen::Projection)]
#[projection(of = k8s_openapi::api::core::v1::Namespace, keep_managed_fields)]
struct NamespacePhase {
    metadata: ObjectMeta,
    #[projection(path = "status.phase")]
    phase: Option<String>,
}

fn pod_json(name: &str, node: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": "web"},
            "annotations": {"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                               "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
        },
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}]}
    })
}

#[test]
fn a_projection_decodes_only_its_paths() {
    let got: PodPlacement = serde_json::from_value(pod_json("web-0", "n1")).unwrap();
    assert_eq!(got.node_name.as_deref(), Some("n1"));
    assert_eq!(got.phase.as_deref(), Some("Running"));
    assert_eq!(got.pod_ips.unwrap()[0].ip, "10.0.0.1");
    assert_eq!(got.metadata.name.as_deref(), Some("web-0"));
    assert_eq!(got.metadata.labels.unwrap()["app"], "web");
    // managedFields and the last-applied annotation are skipped unless the projection
    // keeps them
    assert!(got.metadata.managed_fields.is_none());
    let annotations = got.metadata.annotations.unwrap();
    assert_eq!(annotations.len(), 1);
    assert_eq!(annotations["team"], "a");
}

/// No whole object is built: a Pod whose full decode fails (containers of the wrong type,
/// an unknown shape under status) decodes into the projection.
#[test]
fn a_projection_never_builds_the_whole_object() {
    let mut broken = pod_json("web-0", "n1");
    broken["spec"]["containers"] = json!("not a list");
    broken["status"]["conditions"] = json!(42);
    assert!(serde_json::from_value::<Pod>(broken.clone()).is_err());
    let got: PodPlacement = serde_json::from_value(broken).unwrap();
    assert_eq!(got.node_name.as_deref(), Some("n1"));
}

/// Absent or null parents and leaves are `None`, not errors (an unscheduled Pod).
#[test]
fn missing_and_null_parts_are_none() {
    let got: PodPlacement =
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": null})).unwrap();
    assert_eq!(got.node_name, None);
    assert_eq!(got.phase, None);
}

/// A field of another type than the projection expects is the same typed decode error a
/// whole object gives.
#[test]
fn a_field_of_the_wrong_type_is_a_decode_error() {
    let mut bad = pod_json("web-0", "n1");
    bad["spec"]["nodeName"] = json!(7);
    let err = serde_json::from_value::<PodPlacement>(bad.clone()).unwrap_err();
    assert!(
        err.to_string().contains("invalid type: integer `7`"),
        "{err}"
    );
    assert!(serde_json::from_value::<Pod>(bad).is_err());
}

#[test]
fn it_serializes_as_the_partial_object_of_its_kind() {
    let got: PodPlacement = serde_json::from_value(pod_json("web-0", "n1")).unwrap();
    let out = serde_json::to_value(&got).unwrap();
    assert_eq!(out["apiVersion"], "v1");
    assert_eq!(out["kind"], "Pod");
    assert_eq!(out["spec"], json!({"nodeName": "n1"}));
    assert_eq!(out["status"]["phase"], "Running");
    let back: PodPlacement = serde_json::from_value(out).unwrap();
    assert_eq!(back, got);
}

#[test]
fn names_and_scope_are_the_source_kinds() {
    use kube_core::Resource;
    assert_eq!(PodPlacement::plural(&()), "pods");
    assert_eq!(PodPlacement::kind(&()), "Pod");
    assert_eq!(PodPlacement::api_version(&()), "v1");
    const { assert!(<<PodPlacement as Resource>::Scope as kubegen::ResourceScope>::NAMESPACED) };
    const { assert!(!<<NamespacePhase as Resource>::Scope as kubegen::ResourceScope>::NAMESPACED) };
    fn source<P: Projection>() -> &'static str {
        std::any::type_name::<P::Source>()
    }
    assert!(source::<PodPlacement>().ends_with("Pod"));
    let ns: NamespacePhase = serde_json::from_value(json!({
        "metadata": {"name": "x", "managedFields": [{"manager": "m"}]},
        "status": {"phase": "Active"}
    }))
    .unwrap();
    assert_eq!(ns.metadata.managed_fields.unwrap().len(), 1);
}

async fn server_with_pods(n: usize) -> (TestServer, Client) {
    let (server, client) = server_and_client().await;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(client.clone(), "default");
    for i in 0..n {
        let pod: Pod =
            serde_json::from_value(pod_json(&format!("web-{i}"), &format!("n{}", i % 2))).unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    (server, client)
}

async fn run<K: kubegen::Object>(
    informer: UnstartedInformer<K>,
) -> (SharedIndexInformer<K>, CancellationToken) {
    let stop = CancellationToken::new();
    let (informer, _running) = informer.spawn(stop.clone());
    tokio::time::timeout(Duration::from_secs(10), async {
        while !informer.has_synced() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the informer syncs");
    (informer, stop)
}

/// An informer, its lister and an index over a projection, through list and watch.
#[tokio::test]
async fn an_informer_lister_and_index_serve_a_projection() {
    let (_server, client) = server_with_pods(4).await;
    let by_node: Indexers<PodPlacement> = {
        let mut ix = kubegen::cache::namespace_indexers();
        ix.insert(
            "node".into(),
            Arc::new(|p: &PodPlacement| Ok(p.node_name.clone().into_iter().collect())),
        );
        ix
    };
    let informer = SharedIndexInformer::new(
        ListWatch::from(ReadClient::<PodPlacement>::all(client.clone())),
        Duration::ZERO,
        by_node,
    );
    let (informer, stop) = run(informer).await;
    let lister = informer.lister();
    let pod = lister.namespaced("default").get("web-1").unwrap();
    assert_eq!(pod.node_name.as_deref(), Some("n1"));
    assert!(pod.metadata.managed_fields.is_none());
    assert_eq!(informer.indexer().by_index("node", "n0").unwrap().len(), 2);

    // a change arrives through the watch, decoded into the projection
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(client.clone(), "default");
    let mut moved = pods.get("web-1").await.unwrap();
    moved
        .metadata
        .labels
        .get_or_insert_default()
        .insert("moved".into(), "yes".into());
    pods.update(&PostParams::default(), &moved).await.unwrap();
    eventually("the watched label", WAIT, || {
        lister.namespaced("default").get("web-1").is_ok_and(|p| {
            p.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("moved"))
        })
    })
    .await;
    stop.cancel();
}

/// The read client reads projections (and has no write methods: see the trybuild case).
#[tokio::test]
async fn a_read_client_gets_and_lists_projections() {
    let (_server, client) = server_with_pods(2).await;
    let pods = ReadClient::<PodPlacement>::namespaced(client, "default");
    let one = pods.get("web-0").await.unwrap();
    // kube-apiserver's Pod strategy resets the status of a created Pod (phase Pending)
    assert_eq!(one.phase.as_deref(), Some("Pending"));
    assert_eq!(one.node_name.as_deref(), Some("n0"));
    let all = pods.list_all(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), 2);
}

/// managedFields dropped at decode, over HTTP: the cache never holds them, the server
/// still has them, and an update of a cached object keeps the server's (kube-apiserver's
/// fieldmanager keeps the live managedFields when an update sends none).
#[tokio::test]
async fn an_informer_with_strip_never_stores_managed_fields() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), "default");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("settings".into());
    cm.metadata.annotations = Some(
        [
            (
                kubegen::client::LAST_APPLIED_ANNOTATION.to_owned(),
                "{}".to_owned(),
            ),
            ("team".to_owned(), "a".to_owned()),
        ]
        .into(),
    );
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let stored = cms.get("settings").await.unwrap();
    assert!(
        stored.metadata.managed_fields.is_some(),
        "the server records managedFields"
    );

    let informer = SharedIndexInformer::new(
        ListWatch::new(cms.clone()).strip(Strip::MANAGED_FIELDS | Strip::LAST_APPLIED),
        Duration::ZERO,
        Indexers::default(),
    );
    let (informer, stop) = run(informer).await;
    let cached = informer
        .lister()
        .namespaced("default")
        .get("settings")
        .unwrap();
    assert!(cached.metadata.managed_fields.is_none());
    assert_eq!(cached.metadata.annotations.as_ref().unwrap().len(), 1);

    // a watched change is stripped too
    let mut changed = (*cached).clone();
    changed.data = Some([("k".to_owned(), "v".to_owned())].into());
    cms.update(&PostParams::default(), &changed).await.unwrap();
    eventually("the watched change", WAIT, || {
        informer
            .lister()
            .namespaced("default")
            .get("settings")
            .is_ok_and(|c| c.data.is_some() && c.metadata.managed_fields.is_none())
    })
    .await;
    assert!(
        cms.get("settings")
            .await
            .unwrap()
            .metadata
            .managed_fields
            .is_some(),
        "the update of a stripped object keeps the server's managedFields"
    );
    stop.cancel();
}

/// A controller whose primary kind is a projection and that owns a projection: owner
/// references map owned changes to their owner's key.
#[tokio::test]
async fn a_controller_reconciles_a_projection_and_maps_owned_projections() {
    use kubegen::controller::{Action, Controller};
    use kubegen::informers::SharedInformerFactory;

    #[derive(Clone, Debug, kubegen::Projection)]
    #[projection(of = ReplicaSet)]
    struct ReplicaSetSize {
        metadata: ObjectMeta,
        #[projection(path = "spec.replicas")]
        replicas: Option<i32>,
    }

    let (_server, client) = server_and_client().await;
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    let rs = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &rs)
        .await
        .unwrap();

    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    type Seen = parking_lot::Mutex<Vec<(String, Option<i32>)>>;
    let seen = Arc::new(Seen::default());
    let controller = Controller::<ReplicaSetSize>::builder(&factory)
        .owns::<PodPlacement>()
        .build();
    let stop = CancellationToken::new();
    let task = tokio::spawn(controller.run(
        |rs: Arc<ReplicaSetSize>, seen: Arc<Seen>| {
            seen.lock()
                .push((rs.metadata.name.clone().unwrap_or_default(), rs.replicas));
            futures::future::ready(Ok::<_, std::io::Error>(Action::done()))
        },
        seen.clone(),
        stop.clone(),
    ));
    eventually("the first reconcile", WAIT, || {
        seen.lock().iter().any(|(n, r)| n == "web" && *r == Some(2))
    })
    .await;
    let before = seen.lock().len();

    // an owned Pod appears: its owner is reconciled again
    let mut pod: Pod = serde_json::from_value(pod_json("web-abc", "n1")).unwrap();
    pod.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: "web".into(),
        uid: rs.metadata.uid.clone().unwrap(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    ResourceClient::<Pod>::namespaced(client, "default")
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    eventually("the owner's reconcile", WAIT, || seen.lock().len() > before).await;
    stop.cancel();
    task.await.unwrap().unwrap();
}

/// A custom resource, and a projection of it.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, kubegen::Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    kind = "Gadget",
    plural = "gadgets",
    namespaced
)]
struct Gadget {
    metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<GadgetSpec>,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct GadgetSpec {
    size: i64,
    #[serde(default)]
    big_blob: String,
}

/// The size of a Gadget, without its blob.
#[derive(Clone, Debug, kubegen::Projection)]
#[projection(of = Gadget)]
struct GadgetSize {
    metadata: ObjectMeta,
    #[projection(path = "spec.size")]
    size: i64,
}

const GADGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

/// Projections of custom resources: the informer over the CRD's objects caches the
/// projection (`spec.bigBlob` never decoded), the read client reads it.
#[tokio::test]
async fn a_projection_of_a_custom_resource() {
    let (server, client) = server_and_client().await;
    server.load_crd_yaml(GADGET_CRD).unwrap();
    let gadgets: ResourceClient<Gadget> = ResourceClient::namespaced(client.clone(), "default");
    for (name, size) in [("a", 1), ("b", 2)] {
        let mut g = Gadget::default();
        g.metadata.name = Some(name.into());
        g.spec = Some(GadgetSpec {
            size,
            big_blob: "x".repeat(4096),
        });
        gadgets.create(&PostParams::default(), &g).await.unwrap();
    }
    let informer = SharedIndexInformer::new(
        ListWatch::from(ReadClient::<GadgetSize>::namespaced(
            client.clone(),
            "default",
        )),
        Duration::ZERO,
        Indexers::default(),
    );
    let (informer, stop) = run(informer).await;
    assert_eq!(
        informer
            .lister()
            .namespaced("default")
            .get("b")
            .unwrap()
            .size,
        2
    );
    let read = ReadClient::<GadgetSize>::namespaced(client, "default");
    assert_eq!(read.get("a").await.unwrap().size, 1);
    let out = serde_json::to_value(read.get("a").await.unwrap()).unwrap();
    assert_eq!(out["apiVersion"], "example.com/v1");
    assert_eq!(out["spec"], json!({"size": 1}));
    stop.cancel();
}
