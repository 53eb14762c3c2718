use serde_json::json;

use crate::common::*;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn foo_crd() -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.samplecontroller.k8s.io"},
        "spec": {
            "group": "samplecontroller.k8s.io", "scope": "Namespaced",
            "names": {"kind": "Foo", "plural": "foos", "singular": "foo", "shortNames": ["fo"]},
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}
            }]
        }
    })
}

#[tokio::test]
async fn creating_a_crd_serves_it_and_sets_established() {
    let (_s, api) = server().await;
    let (code, _) = api.post(CRDS, &foo_crd()).await;
    assert_eq!(code, 201);
    let (_, crd) = api
        .get(&format!("{CRDS}/foos.samplecontroller.k8s.io"))
        .await;
    let conds = crd["status"]["conditions"].as_array().unwrap();
    assert!(
        conds
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    );
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Foo");
    let (code, rl) = api.get("/apis/samplecontroller.k8s.io/v1alpha1").await;
    assert_eq!(code, 200);
    let foos = rl["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "foos")
        .unwrap();
    assert_eq!(foos["shortNames"], json!(["fo"]));
    assert!(
        rl["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "foos/status")
    );
    let (_, groups) = api.get("/apis").await;
    assert!(
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "samplecontroller.k8s.io")
    );
    let path = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos";
    let foo = json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "f"}, "spec": {"replicas": 1}, "status": {"replicas": 9}});
    let (code, obj) = api.post(path, &foo).await;
    assert_eq!(code, 201);
    assert!(obj.get("status").is_none());
    assert_eq!(obj["metadata"]["generation"], 1);
    let (code, status) = api
        .patch(
            &format!("{path}/f"),
            "application/strategic-merge-patch+json",
            "{}",
        )
        .await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
    let (code, scale) = api
        .patch(
            &format!("{path}/f/scale"),
            "application/merge-patch+json",
            r#"{"spec":{"replicas":3}}"#,
        )
        .await;
    assert_eq!((code, scale["spec"]["replicas"].as_i64()), (200, Some(3)));
    let (_, obj) = api
        .patch(
            &format!("{path}/f/status"),
            "application/merge-patch+json",
            r#"{"status":{"replicas":3}}"#,
        )
        .await;
    assert_eq!(obj["status"]["replicas"], 3);
    assert_eq!(obj["spec"]["replicas"], 3);
}

#[tokio::test]
async fn deleting_a_crd_removes_its_resources() {
    let (_s, api) = server().await;
    api.post(CRDS, &foo_crd()).await;
    let path = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos";
    api.post(path, &json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "f"}})).await;
    let mut w = api
        .watch(&format!("{path}?watch=1&resourceVersion=0"))
        .await;
    assert_eq!(w.next_change().await.unwrap()["type"], "ADDED");
    let (code, _) = api
        .delete(&format!("{CRDS}/foos.samplecontroller.k8s.io"), None)
        .await;
    assert_eq!(code, 200);
    assert_eq!(w.next_change().await.unwrap()["type"], "DELETED");
    assert_eq!(api.get(path).await.0, 404);
    assert_eq!(
        api.get("/apis/samplecontroller.k8s.io/v1alpha1").await.0,
        404
    );
    let (_, groups) = api.get("/apis").await;
    assert!(
        !groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "samplecontroller.k8s.io")
    );
}

#[tokio::test]
async fn real_crds_from_files_are_served() {
    let (s, api) = server().await;
    for f in [
        "cert-manager.io_certificates.yaml",
        "gateway.networking.k8s.io_gatewayclasses.yaml",
        "gateway.networking.k8s.io_gateways.yaml",
        "monitoring.coreos.com_servicemonitors.yaml",
    ] {
        s.load_crd_file(&crd_path(f)).unwrap();
    }
    let (code, gc) = api
        .post(
            "/apis/gateway.networking.k8s.io/v1/gatewayclasses",
            &json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                "metadata": {"name": "gc"}, "spec": {"controllerName": "example.com/c"}}),
        )
        .await;
    assert_eq!(code, 201, "{gc}");
    assert!(gc["metadata"].get("namespace").is_none(), "cluster scoped");
    let (_, g) = api.get("/apis/gateway.networking.k8s.io").await;
    assert_eq!(g["preferredVersion"]["version"], "v1");
    let (code, _) = api
        .post(
            "/apis/cert-manager.io/v1/namespaces/default/certificates",
            &json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"},
                "spec": {"secretName": "s", "issuerRef": {"name": "i"}}}),
        )
        .await;
    assert_eq!(code, 201);
}

#[tokio::test]
async fn invalid_crds_are_rejected() {
    let (_s, api) = server().await;
    let mut bad = foo_crd();
    bad["metadata"]["name"] = json!("wrong.name.io");
    let (code, status) = api.post(CRDS, &bad).await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    let mut bad = foo_crd();
    bad["spec"]["versions"][0]["storage"] = json!(false);
    assert_eq!(api.post(CRDS, &bad).await.0, 422);
}

#[tokio::test]
async fn multi_version_crds_serve_the_same_objects_in_every_version() {
    let (s, api) = server().await;
    s.load_crd_file(&crd_path("gateway.networking.k8s.io_gateways.yaml"))
        .unwrap();
    let (code, _) = api
        .post(
            "/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways",
            &json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                "metadata": {"name": "gw"}, "spec": {"gatewayClassName": "gc",
                    "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}),
        )
        .await;
    assert_eq!(code, 201);
    let (code, beta) = api
        .get("/apis/gateway.networking.k8s.io/v1beta1/namespaces/default/gateways/gw")
        .await;
    assert_eq!(code, 200);
    assert_eq!(beta["apiVersion"], "gateway.networking.k8s.io/v1beta1");
    let (_, g) = api.get("/apis/gateway.networking.k8s.io").await;
    let versions: Vec<&str> = g["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1", "v1beta1"]);
}

async fn aggregated(api: &Api, path: &str) -> (String, serde_json::Value) {
    let resp = api
        .http
        .get(format!("{}{path}", api.base))
        .header(
            "accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        )
        .send()
        .await
        .unwrap();
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
    (content_type, resp.json().await.unwrap())
}

/// Aggregated discovery (`apidiscovery.k8s.io/v2`, staging
/// `apiserver/pkg/endpoints/discovery/aggregated/handler.go`), negotiated on `/api` and
/// `/apis`: the whole API in one document, current as CRDs come and go.
#[tokio::test]
async fn aggregated_discovery_follows_crds() {
    let (_s, api) = server().await;
    let (content_type, core) = aggregated(&api, "/api").await;
    assert_eq!(
        content_type,
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    assert_eq!(core["kind"], "APIGroupDiscoveryList");
    let pods = core["items"][0]["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "pods")
        .cloned()
        .unwrap();
    assert_eq!(pods["scope"], "Namespaced");
    assert_eq!(pods["shortNames"], json!(["po"]));
    assert_eq!(pods["subresources"][0]["subresource"], "status");

    let group = |doc: &serde_json::Value, name: &str| {
        doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["metadata"]["name"] == name)
            .cloned()
    };
    api.post(CRDS, &foo_crd()).await;
    let (_, apis) = aggregated(&api, "/apis").await;
    let foos = group(&apis, "samplecontroller.k8s.io").expect("CRD group listed");
    let foo = &foos["versions"][0]["resources"][0];
    assert_eq!(foo["resource"], "foos");
    assert_eq!(foo["responseKind"]["kind"], "Foo");
    assert_eq!(foo["shortNames"], json!(["fo"]));
    let subresources: Vec<&str> = foo["subresources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["subresource"].as_str())
        .collect();
    assert_eq!(subresources, ["status", "scale"]);

    api.delete(&format!("{CRDS}/foos.samplecontroller.k8s.io"), None)
        .await;
    let (_, apis) = aggregated(&api, "/apis").await;
    assert!(group(&apis, "samplecontroller.k8s.io").is_none());
    // Without the media type, the legacy APIGroupList is served.
    assert_eq!(api.get("/apis").await.1["kind"], "APIGroupList");
}
