//! Namespace lifecycle: pkg/registry/core/namespace (strategy.go, storage/storage.go), the
//! NamespaceLifecycle admission plugin (plugin/pkg/admission/namespace/lifecycle) and the
//! namespace controller (pkg/controller/namespace/deletion/namespaced_resources_deleter.go).

use serde_json::json;

use crate::common::*;

async fn namespace(api: &Api, name: &str) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    assert_eq!(api.post("/api/v1/namespaces", &ns).await.0, 201);
}

/// namespace/strategy.go PrepareForCreate: phase Active and the `kubernetes` finalizer.
#[tokio::test]
async fn a_new_namespace_is_active_with_the_kubernetes_finalizer() {
    let (_s, api) = server().await;
    namespace(&api, "fresh").await;
    let (_, ns) = api.get("/api/v1/namespaces/fresh").await;
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
}

/// A blocking finalizer holds the object and with it the namespace (Terminating) until it
/// is removed; the object is never stripped of it (no data loss). Creates in the
/// terminating namespace are 403 Forbidden (NamespaceLifecycle admission).
#[tokio::test]
async fn a_terminating_namespace_waits_for_finalizers_and_refuses_creates() {
    let (_s, api) = server().await;
    namespace(&api, "doomed").await;
    let held = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "held", "finalizers": ["example.com/keep"]}, "data": {"k": "v"}});
    let cms = "/api/v1/namespaces/doomed/configmaps";
    assert_eq!(api.post(cms, &held).await.0, 201);
    assert_eq!(api.post(cms, &cm("free", json!({}))).await.0, 201);
    let (code, body) = api.delete("/api/v1/namespaces/doomed", None).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["status"]["phase"], "Terminating", "{body}");
    assert!(body["metadata"]["deletionTimestamp"].is_string(), "{body}");

    let (_, ns) = api.get("/api/v1/namespaces/doomed").await;
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    let types: Vec<&str> = ns["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["NamespaceContentRemaining", "NamespaceFinalizersRemaining"]
    );
    // The finalizer is kept, the object is deleting, its data intact; the other is gone.
    let (code, obj) = api.get(&format!("{cms}/held")).await;
    assert_eq!(code, 200);
    assert_eq!(obj["metadata"]["finalizers"], json!(["example.com/keep"]));
    assert!(obj["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(obj["data"]["k"], "v");
    assert_eq!(api.get(&format!("{cms}/free")).await.0, 404);

    // NamespaceLifecycle: "unable to create new content in namespace doomed because it is
    // being terminated".
    let (code, status) = api.post(cms, &cm("late", json!({}))).await;
    assert_eq!(code, 403, "{status}");
    assert_eq!(status["reason"], "Forbidden");
    assert!(
        status["message"].as_str().unwrap().ends_with(
            "unable to create new content in namespace doomed because it is being terminated"
        ),
        "{status}"
    );

    // Removing the finalizer lets the object go, and then the namespace.
    let mut release = obj.clone();
    release["metadata"]["finalizers"] = json!([]);
    assert_eq!(api.put(&format!("{cms}/held"), &release).await.0, 200);
    assert_eq!(api.get(&format!("{cms}/held")).await.0, 404);
    assert_eq!(api.get("/api/v1/namespaces/doomed").await.0, 404);
}

/// spec.finalizers other than `kubernetes` hold the namespace until removed through
/// `/finalize` (namespace/storage/storage.go FinalizeREST; ShouldDeleteDuringUpdate).
#[tokio::test]
async fn foreign_spec_finalizers_hold_the_namespace_until_finalize() {
    let (_s, api) = server().await;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "held"}, "spec": {"finalizers": ["example.com/x"]}});
    assert_eq!(api.post("/api/v1/namespaces", &ns).await.0, 201);
    let (code, _) = api.delete("/api/v1/namespaces/held", None).await;
    assert_eq!(code, 200);
    let (code, live) = api.get("/api/v1/namespaces/held").await;
    assert_eq!(code, 200);
    assert_eq!(live["spec"]["finalizers"], json!(["example.com/x"]));
    // A plain update cannot change spec.finalizers (PrepareForUpdate keeps them).
    let mut edit = live.clone();
    edit["spec"]["finalizers"] = json!([]);
    let (_, after) = api.put("/api/v1/namespaces/held", &edit).await;
    assert_eq!(
        after["spec"]["finalizers"],
        json!(["example.com/x"]),
        "{after}"
    );
    // /finalize can, and the namespace goes.
    let (code, body) = api.put("/api/v1/namespaces/held/finalize", &edit).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(api.get("/api/v1/namespaces/held").await.0, 404);
}
