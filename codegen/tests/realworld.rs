//! Real-world type trees (`testdata/realworld`: cert-manager's Certificate, Gateway API's
//! Gateway, Prometheus Operator's ServiceMonitor, a workload embedding a
//! `PodTemplateSpec`), hand-written after the CRD manifests in `testdata/crds/`, their
//! golden output (`hack/verify-codegen.sh` keeps it fresh) compiled here: every field type
//! (k8s-openapi types, `Quantity`, `IntOrString`, `Time`, `MicroTime`, `ByteString`,
//! `serde_json::Value`, std and jiff types, a Clone-only newtype) is deep-copied without
//! annotation (issue 15), and each kind round-trips through the test server with its CRD
//! installed from the manifest: generated client, then informer and lister.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

#[path = "../testdata/realworld/apis/mod.rs"]
mod apis;
#[path = "../testdata/realworld/client/mod.rs"]
#[allow(unused_imports, dead_code)] // a private module: not every item is used here
#[rustfmt::skip] // generated code stays as the generator formats it
mod client;

use std::collections::BTreeMap;
use std::time::Duration;

use apis::certmanager::v1 as cm;
use apis::gateway::v1 as gw;
use apis::monitoring::v1 as mon;
use apis::workloads::v1 as wl;
use client::clientset::versioned::Clientset;
use client::informers::externalversions::SharedInformerFactory;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, LocalObjectReference, Namespace, NodeAffinity, NodeSelector,
    NodeSelectorRequirement, NodeSelectorTerm, PodSpec, PodTemplateSpec, ResourceRequirements,
    SecretKeySelector, SecretReference, Taint, Toleration, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, MicroTime, ObjectMeta, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kubegen::client::params::{ListParams, PostParams};
use kubegen::client::{Client, ResourceClient};
use kubegen::deepcopy::DeepCopy;
use kubegen_testserver::TestServer;
use tokio_util::sync::CancellationToken;

const NS: &str = "realworld";

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(NS.into()),
        labels: Some([("app".to_owned(), name.to_owned())].into()),
        ..ObjectMeta::default()
    }
}

fn time(s: &str) -> Time {
    Time(s.parse().unwrap())
}

fn certificate() -> cm::Certificate {
    cm::Certificate {
        metadata: meta("web-tls"),
        spec: cm::CertificateSpec {
            secret_name: "web-tls".into(),
            secret_template: Some(cm::CertificateSecretTemplate {
                labels: [("team".to_owned(), "web".to_owned())].into(),
                ..Default::default()
            }),
            dns_names: vec!["example.com".into(), "www.example.com".into()],
            ip_addresses: vec!["10.0.0.1".parse().unwrap(), "::1".parse().unwrap()],
            duration: Some(cm::Duration("2160h".into())),
            renew_before: Some(cm::Duration("360h".into())),
            issuer_ref: cm::IssuerReference {
                name: "letsencrypt".into(),
                kind: Some("ClusterIssuer".into()),
                group: Some("cert-manager.io".into()),
            },
            private_key: Some(cm::CertificatePrivateKey {
                algorithm: Some(cm::PrivateKeyAlgorithm::Ecdsa),
                size: Some(256),
                rotation_policy: Some("Always".into()),
            }),
            usages: vec![cm::KeyUsage::DigitalSignature, cm::KeyUsage::ServerAuth],
            keystores: Some(cm::CertificateKeystores {
                pkcs12: Some(cm::Pkcs12Keystore {
                    create: true,
                    password_secret_ref: Some(cm::SecretKeySelector {
                        local_object_reference: LocalObjectReference {
                            name: "p12-pass".into(),
                        },
                        key: Some("password".into()),
                    }),
                }),
            }),
            revision_history_limit: Some(3),
            ..Default::default()
        },
        status: None,
    }
}

fn certificate_status() -> cm::CertificateStatus {
    cm::CertificateStatus {
        conditions: vec![cm::CertificateCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(time("2026-01-01T00:00:00Z")),
            reason: Some("Ready".into()),
            message: Some("Certificate is up to date".into()),
        }],
        not_after: Some(time("2026-04-01T00:00:00Z")),
        not_before: Some(time("2026-01-01T00:00:00Z")),
        renewal_time: Some(time("2026-03-17T00:00:00Z")),
        revision: Some(1),
    }
}

fn gateway() -> gw::Gateway {
    gw::Gateway {
        metadata: meta("edge"),
        spec: gw::GatewaySpec {
            gateway_class_name: "example".into(),
            listeners: vec![gw::Listener {
                name: "http".into(),
                hostname: Some("example.com".into()),
                port: 80,
                protocol: "HTTP".into(),
                tls: None,
                allowed_routes: Some(gw::AllowedRoutes {
                    namespaces: Some(gw::RouteNamespaces {
                        from: Some("Selector".into()),
                        selector: Some(LabelSelector {
                            match_labels: Some([("gateway".to_owned(), "edge".to_owned())].into()),
                            ..LabelSelector::default()
                        }),
                    }),
                    kinds: vec![gw::RouteGroupKind {
                        group: Some("gateway.networking.k8s.io".into()),
                        kind: "HTTPRoute".into(),
                    }],
                }),
            }],
            addresses: vec![gw::GatewaySpecAddress {
                type_: Some("IPAddress".into()),
                value: Some("192.0.2.10".into()),
            }],
            infrastructure: Some(gw::GatewayInfrastructure {
                labels: [("tier".to_owned(), "edge".to_owned())].into(),
                ..Default::default()
            }),
        },
        status: None,
    }
}

fn condition(type_: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: "True".into(),
        reason: type_.into(),
        message: format!("{type_} by the test"),
        last_transition_time: time("2026-01-01T00:00:00Z"),
        observed_generation: Some(1),
    }
}

fn service_monitor() -> mon::ServiceMonitor {
    let secret = |name: &str, key: &str| SecretKeySelector {
        name: name.into(),
        key: key.into(),
        optional: Some(false),
    };
    mon::ServiceMonitor {
        metadata: meta("api"),
        spec: mon::ServiceMonitorSpec {
            job_label: Some("app".into()),
            target_labels: vec!["team".into()],
            endpoints: vec![mon::Endpoint {
                port: Some("metrics".into()),
                target_port: Some(IntOrString::Int(9090)),
                path: Some("/metrics".into()),
                scheme: Some("https".into()),
                params: [("module".to_owned(), vec!["http_2xx".to_owned()])].into(),
                interval: Some("30s".into()),
                bearer_token_secret: Some(secret("api-token", "token")),
                tls_config: Some(mon::TlsConfig {
                    ca: Some(mon::SecretOrConfigMap {
                        secret: Some(secret("api-ca", "ca.crt")),
                        config_map: None,
                    }),
                    server_name: Some("api.internal".into()),
                    ..Default::default()
                }),
                basic_auth: None,
                relabelings: vec![mon::RelabelConfig {
                    source_labels: vec!["__meta_kubernetes_pod_name".into()],
                    target_label: Some("pod".into()),
                    action: Some("replace".into()),
                    ..Default::default()
                }],
                metric_relabelings: Vec::new(),
                honor_labels: Some(true),
            }],
            selector: LabelSelector {
                match_labels: Some([("app".to_owned(), "api".to_owned())].into()),
                ..LabelSelector::default()
            },
            namespace_selector: Some(mon::NamespaceSelector {
                any: None,
                match_names: vec![NS.into()],
            }),
            sample_limit: Some(10_000),
            native_histogram_min_bucket_factor: Some(IntOrString::String("1.1".into())),
        },
    }
}

fn batch_workload() -> wl::BatchWorkload {
    let quantity = |q: &str| Quantity(q.into());
    wl::BatchWorkload {
        metadata: meta("train"),
        spec: wl::BatchWorkloadSpec {
            parallelism: Some(4),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some([("job".to_owned(), "train".to_owned())].into()),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "main".into(),
                        image: Some("example.com/train:1".into()),
                        ..Container::default()
                    }],
                    restart_policy: Some("Never".into()),
                    ..PodSpec::default()
                }),
            },
            tolerations: Some(vec![Toleration {
                key: Some("gpu".into()),
                operator: Some("Exists".into()),
                effect: Some("NoSchedule".into()),
                ..Toleration::default()
            }]),
            affinity: Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: Some(vec![NodeSelectorRequirement {
                                key: "accelerator".into(),
                                operator: "In".into(),
                                values: Some(vec!["a100".into()]),
                            }]),
                            ..NodeSelectorTerm::default()
                        }],
                    }),
                    ..NodeAffinity::default()
                }),
                ..Affinity::default()
            }),
            resources: Some(ResourceRequirements {
                limits: Some([("nvidia.com/gpu".to_owned(), quantity("1"))].into()),
                requests: Some([("cpu".to_owned(), quantity("500m"))].into()),
                ..ResourceRequirements::default()
            }),
            env: vec![EnvVar {
                name: "EPOCHS".into(),
                value: Some("10".into()),
                ..EnvVar::default()
            }],
            volumes: vec![Volume {
                name: "scratch".into(),
                empty_dir: Some(Default::default()),
                ..Volume::default()
            }],
            image_pull_secrets: vec![LocalObjectReference {
                name: "registry".into(),
            }],
            credentials: Some(SecretReference {
                name: Some("s3".into()),
                namespace: Some(NS.into()),
            }),
            max_unavailable: Some(IntOrString::String("25%".into())),
            scratch: Some(quantity("10Gi")),
            quota: Some(BTreeMap::from([
                ("cpu".to_owned(), quantity("8")),
                ("memory".to_owned(), quantity("32Gi")),
            ])),
            node_taints: vec![Taint {
                key: "dedicated".into(),
                value: Some("train".into()),
                effect: "NoSchedule".into(),
                time_added: None,
            }],
            config: Some(serde_json::json!({"optimizer": {"name": "adam", "lr": 0.001}})),
            seed: Some(ByteString(vec![0, 1, 2, 254, 255])),
            not_before: Some("2026-01-01T00:00:00Z".parse().unwrap()),
            suspend_until: Some(time("2026-01-02T00:00:00Z")),
            failure_policy: Some(wl::FailurePolicy::Retry {
                limit: 3,
                backoff: "10s".into(),
            }),
        },
        status: None,
    }
}

fn workload_status() -> wl::BatchWorkloadStatus {
    wl::BatchWorkloadStatus {
        conditions: vec![condition("Running")],
        last_schedule_time: Some(MicroTime("2026-01-01T00:00:00.123456Z".parse().unwrap())),
        active: 4,
    }
}

/// `deep_copy` equals the original and shares nothing with it; `deep_copy_into` into a
/// stale target equals it too.
fn assert_deep_copies<T: DeepCopy + Clone + PartialEq + std::fmt::Debug + Default>(value: &T) {
    let copy = value.deep_copy();
    assert_eq!(&copy, value);
    let mut target = T::default();
    value.deep_copy_into(&mut target);
    assert_eq!(&target, value);
    let mut again = value.clone();
    value.deep_copy_into(&mut again);
    assert_eq!(&again, value);
}

#[test]
fn every_field_type_is_deep_copied_without_annotation() {
    let mut cert = certificate();
    cert.status = Some(certificate_status());
    assert_deep_copies(&cert);
    let mut gateway = gateway();
    gateway.status = Some(gw::GatewayStatus {
        addresses: vec![gw::GatewayStatusAddress {
            type_: Some("IPAddress".into()),
            value: "192.0.2.10".into(),
        }],
        conditions: vec![condition("Accepted"), condition("Programmed")],
        listeners: Vec::new(),
    });
    assert_deep_copies(&gateway);
    assert_deep_copies(&service_monitor());
    let mut workload = batch_workload();
    workload.status = Some(workload_status());
    assert_deep_copies(&workload);

    // Independence: mutate the copy deep inside k8s-openapi and serde_json values.
    let mut copy = workload.deep_copy();
    let template = copy.spec.template.spec.as_mut().unwrap();
    template.containers[0].image = Some("changed".into());
    copy.spec.config.as_mut().unwrap()["optimizer"]["lr"] = serde_json::json!(1);
    copy.spec.quota.as_mut().unwrap().clear();
    assert_eq!(
        workload.spec.template.spec.as_ref().unwrap().containers[0]
            .image
            .as_deref(),
        Some("example.com/train:1")
    );
    assert_eq!(
        workload.spec.config.as_ref().unwrap()["optimizer"]["lr"],
        0.001
    );
    assert_eq!(workload.spec.quota.as_ref().unwrap().len(), 2);
}

#[test]
fn deep_copy_into_reuses_allocations_of_local_and_foreign_fields() {
    let src = batch_workload();
    let mut target = batch_workload();
    let env_ptr = target.spec.env.as_ptr();
    let taints_ptr = target.spec.node_taints.as_ptr();
    let name_ptr = target.metadata.name.as_ref().unwrap().as_ptr();
    src.deep_copy_into(&mut target);
    assert_eq!(target, src);
    // Vec<EnvVar> / Vec<Taint> have no DeepCopy impl: clone_from keeps their buffers.
    assert_eq!(target.spec.env.as_ptr(), env_ptr);
    assert_eq!(target.spec.node_taints.as_ptr(), taints_ptr);
    // ObjectMeta goes field by field through DeepCopy.
    assert_eq!(target.metadata.name.as_ref().unwrap().as_ptr(), name_ptr);
}

/// A test server with the four CRDs installed from their manifests and the test
/// namespace created.
async fn server() -> (TestServer, Client) {
    let server = TestServer::start().await.unwrap();
    for crd in [
        include_str!("../testdata/crds/cert-manager.io_certificates.yaml"),
        include_str!("../testdata/crds/gateway.networking.k8s.io_gateways.yaml"),
        include_str!("../testdata/crds/monitoring.coreos.com_servicemonitors.yaml"),
        include_str!("../testdata/crds/workloads.example.com_batchworkloads.yaml"),
    ] {
        server.load_crd_yaml(crd).unwrap();
    }
    let client = server.client().unwrap();
    let namespaces: ResourceClient<Namespace> = ResourceClient::cluster(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(NS.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    (server, client)
}

#[tokio::test]
async fn each_kind_round_trips_through_client_informer_and_lister() {
    let (_server, client) = server().await;
    let cs = Clientset::new(client.clone());
    let pp = PostParams::default();

    // Create through the generated clients; what comes back is what was sent.
    let certificates = cs.certmanager_v1().certificates(NS);
    let created = certificates.create(&pp, &certificate()).await.unwrap();
    assert_eq!(created.spec, certificate().spec);
    let mut with_status = created.deep_copy();
    with_status.status = Some(certificate_status());
    let updated = certificates.update_status(&pp, &with_status).await.unwrap();
    assert_eq!(updated.status, Some(certificate_status()));

    let gateways = cs.gateway_v1().gateways(NS);
    let created = gateways.create(&pp, &gateway()).await.unwrap();
    assert_eq!(
        created.spec.listeners[0].allowed_routes,
        gateway().spec.listeners[0].allowed_routes
    );
    assert_eq!(created.spec.addresses, gateway().spec.addresses);
    let mut with_status = created.deep_copy();
    with_status
        .status
        .get_or_insert_with(Default::default)
        .conditions = vec![condition("Accepted"), condition("Programmed")];
    let updated = gateways.update_status(&pp, &with_status).await.unwrap();
    assert_eq!(updated.status.unwrap().conditions[1].type_, "Programmed");

    let monitors = cs.monitoring_v1().service_monitors(NS);
    let created = monitors.create(&pp, &service_monitor()).await.unwrap();
    assert_eq!(created.spec, service_monitor().spec);

    let workloads = cs.workloads_v1().batch_workloads(NS);
    let created = workloads.create(&pp, &batch_workload()).await.unwrap();
    assert_eq!(created.spec, batch_workload().spec);
    let mut with_status = created.deep_copy();
    with_status.status = Some(workload_status());
    let updated = workloads.update_status(&pp, &with_status).await.unwrap();
    assert_eq!(updated.status, Some(workload_status()));
    assert_eq!(
        workloads.list(&ListParams::default()).await.unwrap().items[0]
            .spec
            .seed,
        Some(ByteString(vec![0, 1, 2, 254, 255]))
    );

    // Then from the generated informers and listers.
    let factory = SharedInformerFactory::new(client, Duration::ZERO);
    let cert_informer = factory.certmanager().v1().certificates();
    let gateway_informer = factory.gateway().v1().gateways();
    let monitor_informer = factory.monitoring().v1().service_monitors();
    let workload_informer = factory.workloads().v1().batch_workloads();
    cert_informer.informer();
    gateway_informer.informer();
    monitor_informer.informer();
    workload_informer.informer();
    factory.start();
    let synced = factory.wait_for_cache_sync(&CancellationToken::new()).await;
    assert_eq!(synced.len(), 4);
    assert!(synced.values().all(|s| *s));

    let cert = cert_informer
        .lister()
        .certificates(NS)
        .get("web-tls")
        .unwrap();
    assert_eq!(cert.spec, certificate().spec);
    assert_eq!(cert.status, Some(certificate_status()));
    let gateway = gateway_informer.lister().gateways(NS).get("edge").unwrap();
    assert_eq!(gateway.spec.gateway_class_name, "example");
    let monitor = monitor_informer
        .lister()
        .service_monitors(NS)
        .get("api")
        .unwrap();
    assert_eq!(monitor.spec, service_monitor().spec);
    let workload = workload_informer
        .lister()
        .batch_workloads(NS)
        .get("train")
        .unwrap();
    assert_eq!(workload.spec, batch_workload().spec);
    // A controller's copy of a cached object is its own.
    let mut mine = wl::BatchWorkload::deep_copy(&workload);
    mine.spec.tolerations = None;
    assert!(workload.spec.tolerations.is_some());
    factory.shutdown().await;
}
