//! Every built-in resource of kubegen's clientset is served over HTTP (issue 16 item 2),
//! as kube-apiserver serves it: discovery lists it with its scope and verbs, and a list
//! of it answers. The catalogue (`kubegen::kubernetes::catalog`, generated from the same
//! markers as the typed clients) is the one source; this test walks it.

use kubegen::kubernetes::catalog::RESOURCES;
use serde_json::{Value, json};

use crate::common::server;

fn base(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// Discovery (`/api/v1`, `/apis/<group>/<version>`: `APIResourceList`, staging
/// `apimachinery/pkg/apis/meta/v1/types.go`) names every catalogue resource with the
/// markers' scope and verbs, and every listable one answers a list of its list kind.
#[tokio::test]
async fn every_catalogue_resource_is_discovered_and_listable() {
    let (_server, api) = server().await;
    for info in RESOURCES {
        let (code, list) = api.get(&base(info.group, info.version)).await;
        assert_eq!(code, 200, "{}", info.api_version());
        let entry = list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|e| e["name"] == info.plural))
            .unwrap_or_else(|| panic!("{} missing from {}", info.plural, info.api_version()));
        assert_eq!(entry["kind"], info.kind);
        assert_eq!(entry["namespaced"], info.namespaced, "{}", info.plural);
        let verbs: Vec<&str> = entry["verbs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for verb in info.verbs {
            assert!(
                verbs.contains(&verb.as_str()),
                "{} lacks {verb}: {verbs:?}",
                info.plural
            );
        }
        if info.has_verb(kubegen::catalog::Verb::List) {
            let (code, body) = api
                .get(&format!(
                    "{}/{}",
                    base(info.group, info.version),
                    info.plural
                ))
                .await;
            assert_eq!(code, 200, "list {}: {body}", info.plural);
            assert_eq!(body["kind"], format!("{}List", info.kind));
        }
    }
}

/// Resources the server did not serve before the catalogue drove it (rolebindings,
/// persistentvolumeclaims, ingresses, endpoints, replicationcontrollers): full CRUD, and
/// the `/scale` subresource of replicationcontrollers (`pkg/registry/core/
/// replicationcontroller/storage/storage.go` `ScaleREST`).
#[tokio::test]
async fn formerly_missing_resources_round_trip() {
    let (_server, api) = server().await;
    api.post("/api/v1/namespaces", &json!({"metadata": {"name": "demo"}}))
        .await;
    for (path, body) in [
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/demo/rolebindings",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "rb"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}}),
        ),
        (
            "/api/v1/namespaces/demo/persistentvolumeclaims",
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                   "spec": {"accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/demo/ingresses",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"}}),
        ),
        (
            "/api/v1/namespaces/demo/endpoints",
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"}}),
        ),
        (
            "/api/v1/namespaces/demo/replicationcontrollers",
            json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
                   "spec": {"replicas": 1, "selector": {"app": "rc"}}}),
        ),
    ] {
        let (code, created) = api.post(path, &body).await;
        assert_eq!(code, 201, "{path}: {created}");
        let name = created["metadata"]["name"].as_str().unwrap().to_owned();
        let (code, got) = api.get(&format!("{path}/{name}")).await;
        assert_eq!(code, 200, "{path}");
        assert_eq!(got["metadata"]["uid"], created["metadata"]["uid"]);
    }
    let (code, scale) = api
        .get("/api/v1/namespaces/demo/replicationcontrollers/rc/scale")
        .await;
    assert_eq!(code, 200, "{scale}");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 1);
}
