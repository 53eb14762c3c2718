//! Protobuf (API Concepts, "Protobuf encoding"; apimachinery
//! `pkg/runtime/serializer/protobuf/protobuf.go`): bodies in the `k8s\0` + runtime.Unknown
//! envelope, replies negotiated from Accept (apiserver
//! `pkg/endpoints/handlers/negotiation/negotiate.go`), watch frames
//! (`LengthDelimitedFramer` + `metav1.WatchEvent`). The messages are built and read with
//! the `k8s-pb` crate's prost types, compiled from the same generated.proto files as
//! client-go's.

use k8s_pb::{
    api::{apps::v1 as apps, core::v1 as core},
    apimachinery::pkg::{
        apis::meta::v1 as meta,
        runtime::{TypeMeta, Unknown},
    },
};
use prost::Message;
use serde_json::json;

use crate::common::{Api, server};

const PB: &str = "application/vnd.kubernetes.protobuf";

fn envelope(api_version: &str, kind: &str, msg: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(msg.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\0".to_vec();
    out.extend(unknown.encode_to_vec());
    out
}

fn open<M: Message + Default>(body: &[u8]) -> (TypeMeta, M) {
    assert_eq!(&body[..4], b"k8s\0", "protobuf magic");
    let unknown = Unknown::decode(&body[4..]).expect("runtime.Unknown");
    let msg = M::decode(unknown.raw.unwrap_or_default().as_slice()).expect("message");
    (unknown.type_meta.unwrap_or_default(), msg)
}

async fn send_raw(
    api: &Api,
    method: &str,
    path: &str,
    content_type: &str,
    accept: &str,
    body: Option<Vec<u8>>,
) -> (u16, String, Vec<u8>) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = api
        .http
        .request(method, format!("{}{path}", api.base))
        .header("content-type", content_type)
        .header("accept", accept);
    if let Some(b) = body {
        req = req.body(b);
    }
    let resp = req.send().await.unwrap();
    let code = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (code, ct, resp.bytes().await.unwrap().to_vec())
}

fn meta(name: &str) -> Option<meta::ObjectMeta> {
    Some(meta::ObjectMeta {
        name: Some(name.into()),
        ..Default::default()
    })
}

#[tokio::test]
async fn a_protobuf_configmap_is_created_and_read_back_in_protobuf() {
    let (_s, api) = server().await;
    let cm = core::ConfigMap {
        metadata: meta("pb"),
        data: [("k".to_string(), "v".to_string())].into(),
        binary_data: [("b".to_string(), vec![0u8, 1, 2])].into(),
        ..Default::default()
    };
    // client-go with ContentType protobuf: Accept "application/vnd.kubernetes.protobuf, */*"
    let accept = format!("{PB}, */*");
    let (code, ct, body) = send_raw(
        &api,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        PB,
        &accept,
        Some(envelope("v1", "ConfigMap", &cm)),
    )
    .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    assert_eq!(ct, PB);
    let (tm, created): (_, core::ConfigMap) = open(&body);
    assert_eq!(tm.kind.as_deref(), Some("ConfigMap"));
    let md = created.metadata.unwrap();
    assert!(md.uid.is_some() && md.resource_version.is_some());
    assert!(md.creation_timestamp.unwrap().seconds.unwrap() > 1_600_000_000);
    assert_eq!(created.binary_data["b"], vec![0u8, 1, 2]);

    // The same object through JSON: what the protobuf body said, nothing more.
    let (code, got) = api.get("/api/v1/namespaces/default/configmaps/pb").await;
    assert_eq!(code, 200);
    assert_eq!(got["data"], json!({"k": "v"}));
    assert_eq!(got["binaryData"], json!({"b": "AAEC"}));
    assert_eq!(got["metadata"].get("generateName"), None);

    // A list in protobuf.
    let (code, ct, body) = send_raw(
        &api,
        "GET",
        "/api/v1/namespaces/default/configmaps",
        PB,
        PB,
        None,
    )
    .await;
    assert_eq!((code, ct.as_str()), (200, PB));
    let (tm, list): (_, core::ConfigMapList) = open(&body);
    assert_eq!(tm.kind.as_deref(), Some("ConfigMapList"));
    assert!(
        list.items
            .iter()
            .any(|c| c.metadata.as_ref().unwrap().name.as_deref() == Some("pb"))
    );
    assert!(list.metadata.unwrap().resource_version.is_some());

    // JSON when JSON is acceptable.
    let (code, ct, _) = send_raw(
        &api,
        "GET",
        "/api/v1/namespaces/default/configmaps/pb",
        "application/json",
        "application/json, */*",
        None,
    )
    .await;
    assert_eq!((code, ct.as_str()), (200, "application/json"));
}

#[tokio::test]
async fn a_protobuf_deployment_keeps_pointer_zeroes_inline_structs_and_int_or_string() {
    let (_s, api) = server().await;
    let labels: std::collections::BTreeMap<String, String> =
        [("app".to_string(), "web".to_string())].into();
    let d = apps::Deployment {
        metadata: meta("web"),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            selector: Some(meta::LabelSelector {
                match_labels: labels.clone(),
                ..Default::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels,
                    ..Default::default()
                }),
                spec: Some(core::PodSpec {
                    containers: vec![core::Container {
                        name: Some("app".into()),
                        image: Some("nginx:1".into()),
                        // gogo-protobuf writes every non-pointer string, empty or not
                        working_dir: Some(String::new()),
                        liveness_probe: Some(core::Probe {
                            handler: Some(core::ProbeHandler {
                                http_get: Some(core::HttpGetAction {
                                    path: Some("/healthz".into()),
                                    port: Some(
                                        k8s_pb::apimachinery::pkg::util::intstr::IntOrString {
                                            r#type: Some(1),
                                            int_val: Some(0),
                                            str_val: Some("http".into()),
                                        },
                                    ),
                                    ..Default::default()
                                }),
                                ..Default::default()
                            }),
                            period_seconds: Some(5),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }],
                    automount_service_account_token: Some(false),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let (code, _, body) = send_raw(
        &api,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        PB,
        "application/json",
        Some(envelope("apps/v1", "Deployment", &d)),
    )
    .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let (_, got) = api
        .get("/apis/apps/v1/namespaces/default/deployments/web")
        .await;
    assert_eq!(got["spec"]["replicas"], 0);
    let c = &got["spec"]["template"]["spec"]["containers"][0];
    // ProbeHandler is `json:",inline"` in the Go type; the scheme is defaulted
    // (`SetDefaults_HTTPGetAction`, pkg/apis/core/v1/defaults.go).
    assert_eq!(
        c["livenessProbe"]["httpGet"],
        json!({"path": "/healthz", "port": "http", "scheme": "HTTP"})
    );
    assert_eq!(c["livenessProbe"]["periodSeconds"], 5);
    assert_eq!(c.get("workingDir"), None);
    assert_eq!(
        got["spec"]["template"]["spec"]["automountServiceAccountToken"],
        false
    );
}

#[tokio::test]
async fn delete_options_in_protobuf_are_honoured() {
    let (_s, api) = server().await;
    api.post(
        "/api/v1/namespaces/default/configmaps",
        &crate::common::cm("gone", json!({})),
    )
    .await;
    let opts = meta::DeleteOptions {
        preconditions: Some(meta::Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    // client-go's typed clients encode DeleteOptions in the client's group-version.
    let (code, _, _) = send_raw(
        &api,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/gone",
        PB,
        "application/json",
        Some(envelope("v1", "DeleteOptions", &opts)),
    )
    .await;
    assert_eq!(
        code, 409,
        "the uid precondition must be read from the protobuf body"
    );
}

#[tokio::test]
async fn custom_resources_are_json_only() {
    let (s, api) = server().await;
    s.load_crd_file(&crate::common::crd_path(
        "cert-manager.io_certificates.yaml",
    ))
    .unwrap();
    let path = "/apis/cert-manager.io/v1/namespaces/default/certificates";
    let cert = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": "c"}, "spec": {"secretName": "s", "issuerRef": {"name": "i"}}});
    assert_eq!(api.post(path, &cert).await.0, 201);
    // apiextensions-apiserver decodes custom resources from JSON and YAML only: 415.
    let cm = core::ConfigMap {
        metadata: meta("x"),
        ..Default::default()
    };
    let (code, _, body) = send_raw(
        &api,
        "POST",
        path,
        PB,
        "application/json",
        Some(envelope("cert-manager.io/v1", "Certificate", &cm)),
    )
    .await;
    assert_eq!(code, 415, "{}", String::from_utf8_lossy(&body));
    // Accept: protobuf alone is not acceptable (406); with a JSON alternative, JSON.
    let (code, _, _) = send_raw(
        &api,
        "GET",
        &format!("{path}/c"),
        "application/json",
        PB,
        None,
    )
    .await;
    assert_eq!(code, 406);
    let (code, ct, _) = send_raw(
        &api,
        "GET",
        &format!("{path}/c"),
        "application/json",
        &format!("{PB}, application/json"),
        None,
    )
    .await;
    assert_eq!((code, ct.as_str()), (200, "application/json"));
}

#[tokio::test]
async fn watches_stream_length_prefixed_watch_events_in_protobuf() {
    let (_s, api) = server().await;
    let resp = api
        .http
        .get(format!(
            "{}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=2",
            api.base
        ))
        .header("accept", PB)
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    api.post(
        "/api/v1/namespaces/default/configmaps",
        &crate::common::cm("w", json!({})),
    )
    .await;
    let body = resp.bytes().await.unwrap();
    // 4-byte big-endian length, then a metav1.WatchEvent whose object is an envelope.
    let mut rest = &body[..];
    let mut names = Vec::new();
    while !rest.is_empty() {
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let event = meta::WatchEvent::decode(&rest[4..4 + len]).unwrap();
        rest = &rest[4 + len..];
        assert_eq!(event.r#type.as_deref(), Some("ADDED"));
        let raw = event.object.unwrap().raw.unwrap();
        let (tm, cm): (_, core::ConfigMap) = open(&raw);
        assert_eq!(tm.kind.as_deref(), Some("ConfigMap"));
        names.push(cm.metadata.unwrap().name.unwrap());
    }
    assert!(names.contains(&"w".to_string()), "{names:?}");
}
