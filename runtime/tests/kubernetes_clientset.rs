//! The generated built-in clientset, listers and informers (`kubegen::kubernetes`) against
//! the test server: a typed round trip for one resource of each served group, the scale
//! and status subresources of Deployments, a typed informer + lister, and the built-in
//! fake clientset.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec,
};
use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec};
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestSpec,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::flowcontrol::v1::{FlowSchema, FlowSchemaSpec};
use k8s_openapi::api::networking::v1::{IngressClass, NetworkPolicy};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{APIService, APIServiceSpec};
use kubegen::client::Client;
use kubegen::client::params::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubegen::kubernetes::clientset::versioned::Clientset;
use kubegen::kubernetes::informers::externalversions::SharedInformerFactory;
use kubegen_testserver::TestServer;
use kubegen_testserver::fake::kubernetes::new_simple_clientset;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const NS: &str = "builtin";

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A test server with the `builtin` namespace, and a typed clientset over HTTP.
async fn server() -> (TestServer, Client, Clientset) {
    let server = TestServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cs = Clientset::new(client.clone());
    cs.core_v1()
        .namespaces()
        .create(
            &PostParams::default(),
            &Namespace {
                metadata: meta(NS),
                ..Namespace::default()
            },
        )
        .await
        .unwrap();
    (server, client, cs)
}

/// create → get → list → merge patch → update → delete → NotFound, through one typed
/// client; `$client` is the typed client, `$obj` an object with only a name set.
macro_rules! round_trip {
    ($client:expr, $obj:expr) => {{
        let client = $client;
        let obj = $obj;
        let name = obj.metadata.name.clone().unwrap();
        let what = format!("{}/{}", std::any::type_name_of_val(&obj), name);
        let created = client.create(&PostParams::default(), &obj).await.unwrap();
        assert!(created.metadata.uid.is_some(), "{what}: created has a uid");
        let got = client.get(&name).await.unwrap();
        assert_eq!(got.metadata.uid, created.metadata.uid, "{what}: get");
        let listed = client.list(&ListParams::default()).await.unwrap();
        assert!(
            listed
                .items
                .iter()
                .any(|o| o.metadata.name.as_deref() == Some(name.as_str())),
            "{what}: list"
        );
        let patched = client
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"round-trip": "patched"}}})),
            )
            .await
            .unwrap();
        // Server-set labels (a namespace's `kubernetes.io/metadata.name`) stay beside it.
        assert_eq!(
            patched
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("round-trip"))
                .map(String::as_str),
            Some("patched"),
            "{what}: patch"
        );
        let mut changed = patched.clone();
        changed.metadata.annotations = Some(labels(&[("updated", "yes")]));
        let updated = client
            .update(&PostParams::default(), &changed)
            .await
            .unwrap();
        assert_eq!(
            updated.metadata.annotations,
            Some(labels(&[("updated", "yes")])),
            "{what}: update"
        );
        client
            .delete(&name, &DeleteParams::default())
            .await
            .unwrap();
        assert!(
            client.get(&name).await.unwrap_err().is_not_found(),
            "{what}: deleted"
        );
    }};
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    let selector = labels(&[("app", name)]);
    Deployment {
        metadata: meta(name),
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(selector.clone()),
                ..LabelSelector::default()
            },
            template: k8s_openapi::api::core::v1::PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(selector),
                    ..ObjectMeta::default()
                }),
                spec: None,
            },
            ..DeploymentSpec::default()
        },
        status: None,
    }
}

#[tokio::test]
async fn namespaced_groups_round_trip_through_their_typed_clients() {
    let (_server, _client, cs) = server().await;
    round_trip!(
        cs.core_v1().config_maps(NS),
        ConfigMap {
            metadata: meta("cm"),
            data: Some(labels(&[("k", "v")])),
            ..ConfigMap::default()
        }
    );
    round_trip!(cs.apps_v1().deployments(NS), deployment("web", 1));
    round_trip!(
        cs.batch_v1().cron_jobs(NS),
        CronJob {
            metadata: meta("nightly"),
            spec: CronJobSpec {
                schedule: "0 3 * * *".into(),
                ..CronJobSpec::default()
            },
            status: None,
        }
    );
    round_trip!(
        cs.autoscaling_v2().horizontal_pod_autoscalers(NS),
        HorizontalPodAutoscaler {
            metadata: meta("web"),
            spec: HorizontalPodAutoscalerSpec {
                max_replicas: 5,
                scale_target_ref: CrossVersionObjectReference {
                    api_version: Some("apps/v1".into()),
                    kind: "Deployment".into(),
                    name: "web".into(),
                },
                ..HorizontalPodAutoscalerSpec::default()
            },
            status: None,
        }
    );
    round_trip!(
        cs.coordination_v1().leases(NS),
        Lease {
            metadata: meta("leader"),
            spec: Some(LeaseSpec {
                holder_identity: Some("me".into()),
                ..LeaseSpec::default()
            }),
        }
    );
    round_trip!(
        cs.rbac_v1().roles(NS),
        Role {
            metadata: meta("reader"),
            rules: Some(vec![PolicyRule {
                api_groups: Some(vec![String::new()]),
                resources: Some(vec!["pods".into()]),
                verbs: vec!["get".into(), "list".into()],
                ..PolicyRule::default()
            }]),
        }
    );
    round_trip!(
        cs.networking_v1().network_policies(NS),
        NetworkPolicy {
            metadata: meta("deny-all"),
            ..NetworkPolicy::default()
        }
    );
    round_trip!(
        cs.policy_v1().pod_disruption_budgets(NS),
        PodDisruptionBudget {
            metadata: meta("web"),
            ..PodDisruptionBudget::default()
        }
    );
    round_trip!(
        cs.discovery_v1().endpoint_slices(NS),
        EndpointSlice {
            metadata: meta("web-abc"),
            address_type: "IPv4".into(),
            ..EndpointSlice::default()
        }
    );
    round_trip!(
        cs.events_v1().events(NS),
        Event {
            metadata: meta("web.1"),
            reason: Some("Tested".into()),
            ..Event::default()
        }
    );
}

#[tokio::test]
async fn cluster_scoped_groups_round_trip_through_their_typed_clients() {
    let (_server, _client, cs) = server().await;
    round_trip!(
        cs.core_v1().namespaces(),
        Namespace {
            metadata: meta("scratch"),
            ..Namespace::default()
        }
    );
    round_trip!(
        cs.rbac_v1().cluster_roles(),
        ClusterRole {
            metadata: meta("system:tester"),
            ..ClusterRole::default()
        }
    );
    round_trip!(
        cs.networking_v1().ingress_classes(),
        IngressClass {
            metadata: meta("nginx"),
            ..IngressClass::default()
        }
    );
    round_trip!(
        cs.storage_v1().storage_classes(),
        StorageClass {
            metadata: meta("fast"),
            provisioner: "example.com/ssd".into(),
            ..StorageClass::default()
        }
    );
    round_trip!(
        cs.scheduling_v1().priority_classes(),
        PriorityClass {
            metadata: meta("high"),
            value: Some(1000),
            ..PriorityClass::default()
        }
    );
    round_trip!(
        cs.node_v1().runtime_classes(),
        RuntimeClass {
            metadata: meta("gvisor"),
            handler: "runsc".into(),
            ..RuntimeClass::default()
        }
    );
    round_trip!(
        cs.certificates_v1().certificate_signing_requests(),
        CertificateSigningRequest {
            metadata: meta("node-csr"),
            spec: CertificateSigningRequestSpec {
                signer_name: "example.com/signer".into(),
                ..CertificateSigningRequestSpec::default()
            },
            status: None,
        }
    );
    round_trip!(
        cs.admissionregistration_v1()
            .validating_webhook_configurations(),
        ValidatingWebhookConfiguration {
            metadata: meta("policy.example.com"),
            ..ValidatingWebhookConfiguration::default()
        }
    );
    round_trip!(
        cs.flowcontrol_v1().flow_schemas(),
        FlowSchema {
            metadata: meta("tests"),
            spec: FlowSchemaSpec {
                matching_precedence: Some(500),
                ..FlowSchemaSpec::default()
            },
            status: None,
        }
    );
    round_trip!(
        cs.apiregistration_v1().api_services(),
        APIService {
            metadata: meta("v1.example.com"),
            spec: Some(APIServiceSpec {
                group: Some("example.com".into()),
                version: Some("v1".into()),
                group_priority_minimum: 1000,
                version_priority: 15,
                ..APIServiceSpec::default()
            }),
            status: None,
        }
    );
}

#[tokio::test]
async fn apiextensions_client_lists_the_servers_crds() {
    let (_server, _client, cs) = server().await;
    let crds = cs
        .apiextensions_v1()
        .custom_resource_definitions()
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(crds.items.is_empty(), "a fresh server has no CRDs");
}

#[tokio::test]
async fn deployment_scale_extension_reads_and_writes_spec_replicas() {
    let (_server, _client, cs) = server().await;
    let deployments = cs.apps_v1().deployments(NS);
    deployments
        .create(&PostParams::default(), &deployment("web", 2))
        .await
        .unwrap();

    let scale = deployments.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(scale.metadata.name.as_deref(), Some("web"));

    let mut wanted = scale.clone();
    wanted.spec.get_or_insert_with(Default::default).replicas = Some(5);
    let updated = deployments
        .update_scale("web", &PostParams::default(), &wanted)
        .await
        .unwrap();
    assert_eq!(updated.spec.and_then(|s| s.replicas), Some(5));
    let stored = deployments.get("web").await.unwrap();
    assert_eq!(stored.spec.replicas, Some(5));
}

#[tokio::test]
async fn deployment_update_status_writes_only_the_status() {
    let (_server, _client, cs) = server().await;
    let deployments = cs.apps_v1().deployments(NS);
    let created = deployments
        .create(&PostParams::default(), &deployment("web", 3))
        .await
        .unwrap();

    let mut reported = created.clone();
    reported.status = Some(DeploymentStatus {
        ready_replicas: Some(3),
        ..DeploymentStatus::default()
    });
    // A spec change sent to /status is ignored: only the status is written.
    reported.spec.replicas = Some(9);
    let updated = deployments
        .update_status(&PostParams::default(), &reported)
        .await
        .unwrap();
    assert_eq!(updated.status.unwrap().ready_replicas, Some(3));
    let stored = deployments.get("web").await.unwrap();
    assert_eq!(stored.status.unwrap().ready_replicas, Some(3));
    assert_eq!(stored.spec.replicas, Some(3));
}

#[tokio::test]
async fn deployment_informer_and_lister_come_from_the_typed_factory() {
    let (_server, client, cs) = server().await;
    let deployments = cs.apps_v1().deployments(NS);
    for (name, tier) in [("web", "front"), ("api", "back")] {
        let mut d = deployment(name, 1);
        d.metadata.labels = Some(labels(&[("tier", tier)]));
        deployments
            .create(&PostParams::default(), &d)
            .await
            .unwrap();
    }

    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let typed = factory.apps().v1().deployments();
    let informer = typed.informer();
    factory.start();
    let stop = CancellationToken::new();
    let synced = factory.wait_for_cache_sync(&stop).await;
    assert!(!synced.is_empty() && synced.values().all(|s| *s));
    assert!(informer.has_synced());

    let lister = typed.lister();
    let web = lister.deployments(NS).get("web").unwrap();
    assert_eq!(web.spec.replicas, Some(1));
    let err = lister.deployments("elsewhere").get("web").unwrap_err();
    assert!(err.is_not_found());
    let back: kubegen::cache::Selector =
        kube_core::Expression::Equal("tier".into(), "back".into()).into();
    let found = lister.list(&back);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].metadata.name.as_deref(), Some("api"));

    // Later writes reach the lister through the informer.
    deployments
        .delete("api", &DeleteParams::default())
        .await
        .unwrap();
    let mut gone = false;
    for _ in 0..200 {
        if lister.deployments(NS).get("api").is_err() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone, "the delete reaches the lister");

    // for_resource knows every generated built-in resource.
    let gvr = kube_core::GroupVersionResource::gvr("batch", "v1", "cronjobs");
    assert_eq!(factory.for_resource(&gvr).unwrap().gvr(), &gvr);
    factory.shutdown().await;
}

#[tokio::test]
async fn fake_clientset_serves_seeded_objects_and_records_actions() {
    let cs = new_simple_clientset();
    let mut seeded = deployment("seeded", 4);
    seeded.metadata.namespace = Some(NS.into());
    cs.add(&seeded).unwrap();

    let deployments = cs.apps_v1().deployments(NS);
    let got = deployments.get("seeded").await.unwrap();
    assert_eq!(got.spec.replicas, Some(4));
    deployments
        .create(&PostParams::default(), &deployment("created", 1))
        .await
        .unwrap();
    assert_eq!(
        deployments
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );
    let scale = deployments.get_scale("seeded").await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));

    // Resources the test server does not serve by default are registered by the fake.
    let quotas = cs.core_v1().resource_quotas(NS);
    quotas
        .create(
            &PostParams::default(),
            &k8s_openapi::api::core::v1::ResourceQuota {
                metadata: meta("q"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(quotas.get("q").await.is_ok());

    let actions = cs.fake().actions();
    assert!(
        actions
            .iter()
            .any(|a| a.matches("get", "deployments") && a.request.name == "seeded"),
        "{actions:?}"
    );
    assert!(
        actions
            .iter()
            .any(|a| a.matches("get", "deployments") && a.request.subresource == "scale")
    );
    assert!(actions.iter().any(|a| a.matches("create", "deployments")));
    assert!(
        actions
            .iter()
            .any(|a| a.matches("create", "resourcequotas"))
    );
    assert!(
        !actions
            .iter()
            .any(|a| a.matches("create", "deployments") && a.request.name == "seeded"),
        "seeding records no action"
    );
}
