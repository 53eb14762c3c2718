//! The shared informer factory's options, each against the test server (client-go
//! `informers/factory.go`: `WithTweakListOptions`, `WithCustomResyncConfig`,
//! `WithTransform`, and `InformerFor`'s "the first request creates the informer"), and
//! the metadata-only and dynamic informers it shares the same way.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube_core::{
    DynamicObject, GroupVersionKind, GroupVersionResource, ObjectMeta, discovery::Scope,
    params::PostParams,
};
use kubegen::{
    cache::{IndexFunc, Indexers, ListerError, QueueKind, ResourceEventHandlerFuncs},
    client::{Discovery, DynamicClient, ResourceClient},
    informers::SharedInformerFactory,
};

mod informer_support;

use informer_support::{eventually, server_and_client, start_and_sync};

/// How long a condition may take to hold.
const WAIT: Duration = Duration::from_secs(5);

fn cm(name: &str, app: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("app".to_owned(), app.to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tweak_list_params_filters_every_list_and_watch() {
    let (_server, client) = server_and_client().await;
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    api.create(&pp, &cm("web-1", "web")).await.expect("create");
    api.create(&pp, &cm("db-1", "db")).await.expect("create");
    let factory = SharedInformerFactory::builder(client)
        .tweak_list_params(|lp| lp.label_selector = Some("app=web".into()))
        .build();
    let lister = factory.lister_for::<ConfigMap>();
    start_and_sync(&factory).await;
    let names = |l: &kubegen::cache::Lister<ConfigMap>| {
        let mut n: Vec<String> = l
            .list(&Default::default())
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&lister), ["web-1"], "the list was filtered");
    api.create(&pp, &cm("db-2", "db")).await.expect("create");
    api.create(&pp, &cm("web-2", "web")).await.expect("create");
    eventually("web-2", WAIT, || {
        lister.list(&Default::default()).len() == 2
    })
    .await;
    assert_eq!(names(&lister), ["web-1", "web-2"], "the watch was filtered");
    factory.shutdown().await;
}

/// Counts the resyncs `K`'s informer delivers: updates whose old and new resourceVersions
/// are equal.
fn resyncs_of<K: kubegen::Object>(factory: &SharedInformerFactory) -> Arc<AtomicUsize> {
    let counter = Arc::new(AtomicUsize::new(0));
    let count = counter.clone();
    factory
        .informer_for::<K>()
        .add_event_handler(ResourceEventHandlerFuncs::new().update_func(
            move |old: &Arc<K>, new: &Arc<K>| {
                if old.meta().resource_version == new.meta().resource_version {
                    count.fetch_add(1, Ordering::SeqCst);
                }
            },
        ))
        .expect("handler");
    counter
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resync_for_gives_one_type_its_own_period() {
    let (_server, client) = server_and_client().await;
    let pp = PostParams::default();
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&pp, &cm("a", "web"))
        .await
        .expect("create");
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("s".into()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    ResourceClient::<Secret>::namespaced(client.clone(), "default")
        .create(&pp, &secret)
        .await
        .expect("create");
    let factory = SharedInformerFactory::builder(client)
        .resync_for::<ConfigMap>(Duration::from_secs(1))
        .build();
    let cm_resyncs = resyncs_of::<ConfigMap>(&factory);
    let secret_resyncs = resyncs_of::<Secret>(&factory);
    start_and_sync(&factory).await;
    eventually("a ConfigMap resync", WAIT, || {
        cm_resyncs.load(Ordering::SeqCst) >= 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(cm_resyncs.load(Ordering::SeqCst) >= 2, "resynced again");
    assert_eq!(
        secret_resyncs.load(Ordering::SeqCst),
        0,
        "Secrets keep the default (none)"
    );
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transform_for_changes_only_its_type_before_caching() {
    let (_server, client) = server_and_client().await;
    let pp = PostParams::default();
    ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&pp, &cm("a", "web"))
        .await
        .expect("create");
    let factory = SharedInformerFactory::builder(client)
        .transform_for::<ConfigMap>(|c| {
            c.data = None;
            c.metadata.managed_fields = None;
        })
        .build();
    let cms = factory.lister_for::<ConfigMap>();
    let secrets = factory.informer_for::<Secret>();
    start_and_sync(&factory).await;
    let a = cms.namespaced("default").get("a").expect("cached");
    assert!(
        a.data.is_none() && a.metadata.managed_fields.is_none(),
        "{a:?}"
    );
    assert_eq!(
        a.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app"))
            .map(String::as_str),
        Some("web"),
        "the rest is kept"
    );
    assert!(secrets.has_synced());
    factory.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_for_a_type_sets_its_informer_up() {
    let (_server, client) = server_and_client().await;
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let by_app: IndexFunc<ConfigMap> = Arc::new(|c: &ConfigMap| {
        Ok(c.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app").cloned())
            .into_iter()
            .collect())
    });
    let first = factory.informer_for_with::<ConfigMap>(|b| {
        b.indexers(HashMap::from([("by-app".to_owned(), by_app)]))
            .queue(QueueKind::DeltaFifo)
    });
    let called = Arc::new(AtomicUsize::new(0));
    let second = factory.informer_for_with::<ConfigMap>({
        let called = called.clone();
        move |b| {
            called.fetch_add(1, Ordering::SeqCst);
            b.indexers(Indexers::new())
        }
    });
    assert_eq!(
        called.load(Ordering::SeqCst),
        0,
        "a later request customizes nothing"
    );
    let mut names: Vec<String> = second.indexer().get_indexers().into_keys().collect();
    names.sort();
    assert_eq!(
        names,
        ["by-app", "namespace"],
        "the first request's indexers, and the factory's"
    );
    start_and_sync(&factory).await;
    assert!(first.has_synced() && second.has_synced());
    ResourceClient::<ConfigMap>::namespaced(client, "default")
        .create(&PostParams::default(), &cm("a", "web"))
        .await
        .expect("create");
    eventually("the shared cache", WAIT, || {
        second
            .indexer()
            .by_index("by-app", "web")
            .is_ok_and(|v| v.len() == 1)
    })
    .await;
    factory.shutdown().await;
}

/// client-go `metadatainformer` / controller-runtime `WatchesMetadata`: the informer lists
/// and watches with `as=PartialObjectMetadata` (API Concepts, "Retrieving metadata only"),
/// so what it caches came from the server as `PartialObjectMetadata`, without data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_informer_caches_partial_object_metadata() {
    let (_server, client) = server_and_client().await;
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    api.create(&pp, &cm("a", "web")).await.expect("create");
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let metadata = factory.metadata_informer_for::<ConfigMap>();
    let lister = factory.metadata_lister_for::<ConfigMap>();
    start_and_sync(&factory).await;
    api.create(&pp, &cm("b", "db")).await.expect("create");
    eventually("the watched object", WAIT, || {
        metadata.indexer().get_by_key("default/b").is_some()
    })
    .await;
    for name in ["a", "b"] {
        let meta = lister.namespaced("default").get(name).expect("cached");
        let kind = meta.types.as_ref().map(|t| t.kind.as_str());
        assert_eq!(kind, Some("PartialObjectMetadata"), "{name}: {meta:?}");
        assert!(
            meta.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("app"))
        );
    }
    let gvr = kube_core::GroupVersionResource::gvr("", "v1", "configmaps");
    assert!(
        factory.for_resource(&gvr).is_err(),
        "a metadata informer is not the resource's informer"
    );
    factory.shutdown().await;
}

fn dynamic(value: serde_json::Value) -> DynamicObject {
    serde_json::from_value(value).expect("a DynamicObject")
}

/// client-go `dynamicinformer`: informers over resources known only at run time (here two
/// real CRDs, cert-manager's namespaced Certificate and Gateway API's cluster-scoped
/// GatewayClass, resolved through discovery), caching `DynamicObject`s, shared per
/// group-version-resource, found by `ForResource`, and scoped by the factory's namespace
/// only where the resource is namespaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_informers_cache_resources_known_at_run_time() {
    let (server, client) = server_and_client().await;
    for crd in [
        include_str!("../../testserver/testdata/crds/cert-manager.io_certificates.yaml"),
        include_str!(
            "../../testserver/testdata/crds/gateway.networking.k8s.io_gatewayclasses.yaml"
        ),
    ] {
        server.load_crd_yaml(crd).expect("CRD");
    }
    let discovery = Discovery::new(client.clone());
    let (certificates, cert_scope) = discovery
        .resolve_gvk(&GroupVersionKind::gvk(
            "cert-manager.io",
            "v1",
            "Certificate",
        ))
        .await
        .expect("discovered");
    let (classes, class_scope) = discovery
        .resolve_gvk(&GroupVersionKind::gvk(
            "gateway.networking.k8s.io",
            "v1",
            "GatewayClass",
        ))
        .await
        .expect("discovered");
    assert_eq!(
        (cert_scope.clone(), class_scope.clone()),
        (Scope::Namespaced, Scope::Cluster)
    );

    let certificate = |namespace: &str, name: &str| {
        dynamic(serde_json::json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": name, "namespace": namespace, "labels": {"team": "web"}},
            "spec": {
                "secretName": format!("{name}-tls"),
                "dnsNames": ["example.com"],
                "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}
            }
        }))
    };
    let pp = PostParams::default();
    let in_ns = |ns: &str| DynamicClient::namespaced(client.clone(), &certificates, ns);
    in_ns("default")
        .create(&pp, &certificate("default", "web"))
        .await
        .expect("create");
    in_ns("kube-system")
        .create(&pp, &certificate("kube-system", "other-namespace"))
        .await
        .expect("create");

    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("default")
        .build();
    let informer = factory.dynamic_informer_for(&certificates, cert_scope.clone());
    let again = factory.dynamic_informer_for_with(&certificates, cert_scope.clone(), |_| {
        panic!("a later request customizes nothing")
    });
    let class_lister = factory.dynamic_lister_for(&classes, class_scope);
    let lister = factory.dynamic_lister_for(&certificates, cert_scope);
    start_and_sync(&factory).await;
    let synced = factory.wait_for_cache_sync(&Default::default()).await;
    assert_eq!(synced.len(), 2, "one informer per resource: {synced:?}");

    // Created after the sync: arrives through the watch.
    DynamicClient::all(client.clone(), &classes)
        .create(
            &pp,
            &dynamic(serde_json::json!({
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "internet"},
                "spec": {"controllerName": "example.com/gateway"}
            })),
        )
        .await
        .expect("create");
    in_ns("default")
        .create(&pp, &certificate("default", "api"))
        .await
        .expect("create");
    eventually("the watched objects", WAIT, || {
        again.indexer().get_by_key("default/api").is_some() && class_lister.get("internet").is_ok()
    })
    .await;

    let web = lister.namespaced("default").get("web").expect("cached");
    assert_eq!(web.data["spec"]["secretName"], "web-tls");
    assert_eq!(
        web.types.as_ref().map(|t| t.kind.as_str()),
        Some("Certificate")
    );
    let mut names: Vec<String> = informer
        .indexer()
        .list()
        .iter()
        .map(|c| c.metadata.name.clone().unwrap_or_default())
        .collect();
    names.sort();
    assert_eq!(names, ["api", "web"], "only the factory's namespace");
    let missing = lister
        .namespaced("default")
        .get("nope")
        .expect_err("missing");
    assert_eq!(
        missing,
        ListerError::NotFound {
            resource: "certificates.cert-manager.io".into(),
            name: "nope".into()
        }
    );

    let gvr = GroupVersionResource::gvr("cert-manager.io", "v1", "certificates");
    let generic = factory.for_resource(&gvr).expect("found by resource");
    assert!(generic.downcast::<DynamicObject>().is_some());
    let got = generic.lister().get("default", "api").expect("generic get");
    assert_eq!(got.data["spec"]["secretName"], "api-tls");
    factory.shutdown().await;
}

/// A CRD no Rust type stands for: `gadgets.example.com/v1`, namespaced.
fn gadget_crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Gadget", "listKind": "GadgetList", "plural": "gadgets", "singular": "gadget"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    }))
    .expect("a CRD")
}

/// client-go `dynamicinformer.NewFilteredDynamicSharedInformerFactory(...).ForResource(gvr)`
/// and `metadatainformer.NewFilteredSharedInformerFactory(...).ForResource(gvr)`, from the
/// one factory: a CRD installed while the program runs, named only by its
/// group-version-resource; both informers list and watch it in the factory's namespace
/// with its list tweak, keep listers, call handlers, and are shared with later requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_for_a_resource_known_only_by_its_group_version_resource() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let (_server, client) = server_and_client().await;
    let gvr = GroupVersionResource::gvr("example.com", "v1", "gadgets");
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("default")
        .tweak_list_params(|lp| lp.label_selector = Some("team=web".into()))
        .build();
    let not_served = factory
        .dynamic_informer_for_gvr(&gvr)
        .await
        .expect_err("no CRD yet");
    assert!(
        not_served.to_string().contains("not served"),
        "{not_served}"
    );

    let pp = PostParams::default();
    ResourceClient::<CustomResourceDefinition>::cluster(client.clone())
        .create(&pp, &gadget_crd())
        .await
        .expect("CRD");
    let discovery = Discovery::new(client.clone());
    let (gadgets, scope) = discovery.resolve_gvr(&gvr).await.expect("discovered");
    assert_eq!(
        (gadgets.kind.as_str(), scope.clone()),
        ("Gadget", Scope::Namespaced)
    );
    let gadget = |namespace: &str, name: &str, team: &str| {
        dynamic(serde_json::json!({
            "apiVersion": "example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": name, "namespace": namespace, "labels": {"team": team}},
            "spec": {"size": 3}
        }))
    };
    let in_ns = |ns: &str| DynamicClient::namespaced(client.clone(), &gadgets, ns);
    in_ns("default")
        .create(&pp, &gadget("default", "a", "web"))
        .await
        .expect("create");
    in_ns("default")
        .create(&pp, &gadget("default", "db", "db"))
        .await
        .expect("create");
    in_ns("kube-system")
        .create(&pp, &gadget("kube-system", "elsewhere", "web"))
        .await
        .expect("create");

    let informer = factory
        .dynamic_informer_for_gvr(&gvr)
        .await
        .expect("dynamic");
    let metadata = factory
        .metadata_informer_for_gvr(&gvr)
        .await
        .expect("metadata");
    let added = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = added.clone();
    metadata
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func(
            move |m: &Arc<kube_core::PartialObjectMeta<DynamicObject>>, _| {
                seen.lock()
                    .expect("lock")
                    .push(m.metadata.name.clone().unwrap_or_default());
            },
        ))
        .expect("handler");
    // later requests share the informers
    let again = factory.dynamic_lister_for_gvr(&gvr).await.expect("lister");
    let metadata_lister = factory.metadata_lister_for_gvr(&gvr).await.expect("lister");
    let same = factory.metadata_informer_for_resource(&gadgets, scope.clone());
    start_and_sync(&factory).await;
    let synced = factory.wait_for_cache_sync(&Default::default()).await;
    assert_eq!(
        synced.len(),
        2,
        "one dynamic, one metadata informer: {synced:?}"
    );

    in_ns("default")
        .create(&pp, &gadget("default", "b", "web"))
        .await
        .expect("create");
    eventually("the watched gadget", WAIT, || {
        again.namespaced("default").get("b").is_ok()
            && same.indexer().get_by_key("default/b").is_some()
    })
    .await;

    let names = |mut n: Vec<String>| {
        n.sort();
        n
    };
    let cached: Vec<String> = informer
        .indexer()
        .list()
        .iter()
        .filter_map(|g| g.metadata.name.clone())
        .collect();
    assert_eq!(
        names(cached),
        ["a", "b"],
        "the namespace and the tweak apply"
    );
    let a = again.namespaced("default").get("a").expect("a");
    assert_eq!(a.data["spec"]["size"], 3);
    let meta = metadata_lister.namespaced("default").get("a").expect("a");
    assert_eq!(
        meta.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata"),
        "metadata only came over the wire"
    );
    assert_eq!(
        metadata_lister
            .namespaced("default")
            .get("db")
            .expect_err("filtered"),
        ListerError::NotFound {
            resource: "gadgets.example.com".into(),
            name: "db".into()
        }
    );
    eventually("the handler's adds", WAIT, || {
        added.lock().expect("lock").len() == 2
    })
    .await;
    assert_eq!(names(added.lock().expect("lock").clone()), ["a", "b"]);

    // ForResource finds the dynamic informer, never the metadata one
    let generic = factory.for_resource(&gvr).expect("found by resource");
    assert!(generic.downcast::<DynamicObject>().is_some());
    assert_eq!(
        generic.lister().get("default", "b").expect("b").data["spec"]["size"],
        3
    );
    factory.shutdown().await;
}
