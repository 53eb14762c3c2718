//! What kube-apiserver sets by itself (issue 16 item 10), as a client sees it.

use serde_json::json;

use crate::common::server;

/// Scheme defaulting (`pkg/apis/apps/v1/defaults.go` `SetDefaults_Deployment`,
/// `pkg/apis/core/v1/defaults.go` `SetDefaults_PodSpec` / `SetDefaults_Container`) on a
/// Deployment that names only what a user writes.
#[tokio::test]
async fn a_bare_deployment_reads_back_defaulted() {
    let (_s, api) = server().await;
    let (code, d) = api
        .post(
            "/apis/apps/v1/namespaces/default/deployments",
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}},
                             "template": {"metadata": {"labels": {"app": "web"}},
                                          "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}),
        )
        .await;
    assert_eq!(code, 201, "{d}");
    let spec = &d["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        pod["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
}

/// `SetDefaults_Namespace` labels every namespace with its name (KEP-2161), also when
/// an update tries to drop the label.
#[tokio::test]
async fn namespaces_carry_their_name_label() {
    let (_s, api) = server().await;
    let (_, ns) = api
        .post(
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "team-a"}}),
        )
        .await;
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team-a"
    );
    let mut changed = ns.clone();
    changed["metadata"]["labels"] = json!({"owner": "ann"});
    let (code, ns) = api.put("/api/v1/namespaces/team-a", &changed).await;
    assert_eq!(code, 200, "{ns}");
    assert_eq!(
        ns["metadata"]["labels"],
        json!({"owner": "ann", "kubernetes.io/metadata.name": "team-a"})
    );
}

/// The DELETE answer is what each store returns: the object for stores with
/// `ReturnDeletedObject` (service/storage/storage.go, serviceaccount/storage/storage.go),
/// a `Status` of `Success` otherwise (configmaps).
#[tokio::test]
async fn delete_answers_as_each_store_does() {
    let (_s, api) = server().await;
    api.post(
        "/api/v1/namespaces/default/services",
        &json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    api.post(
        "/api/v1/namespaces/default/configmaps",
        &json!({"metadata": {"name": "cfg"}}),
    )
    .await;
    let (code, svc) = api
        .delete("/api/v1/namespaces/default/services/web", None)
        .await;
    assert_eq!((code, svc["kind"].as_str()), (200, Some("Service")));
    assert_eq!(
        svc["spec"]["ports"][0]["targetPort"], 80,
        "defaulted on create"
    );
    let (code, status) = api
        .delete("/api/v1/namespaces/default/configmaps/cfg", None)
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        (status["kind"].as_str(), status["status"].as_str()),
        (Some("Status"), Some("Success"))
    );
}

/// A write naming no field manager is recorded under the User-Agent's product
/// (`managerOrUserAgent`, staging `apiserver/pkg/endpoints/handlers/rest.go`).
#[tokio::test]
async fn managed_fields_name_the_user_agent_when_no_manager_is_given() {
    let (_s, api) = server().await;
    let resp = api
        .http
        .post(format!("{}/api/v1/namespaces/default/configmaps", api.base))
        .header("user-agent", "my-operator/v0.3.1 (linux/amd64) kubegen")
        .json(&json!({"metadata": {"name": "cfg"}, "data": {"a": "1"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    let cm: serde_json::Value = resp.json().await.unwrap();
    let entry = &cm["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "my-operator");
    assert_eq!(entry["operation"], "Update");
}
