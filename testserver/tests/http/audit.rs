//! The audit log (`--audit-log-path` and the in-memory log): one `audit.k8s.io/v1`
//! `Event` per request, at `ResponseComplete`, for allowed, refused, failed and watch
//! requests alike.

use std::time::Duration;

use futures::StreamExt;
use kubegen_testserver::{AuditEvent, AuthConfig, ClusterConfig, TestServer, UserInfo};
use serde_json::{Value, json};

const AGENT: &str = "audit-test/1.0";

struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    fn request(&self, method: &str, path: &str, token: &str) -> reqwest::RequestBuilder {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("user-agent", AGENT)
            .bearer_auth(token)
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> u16 {
        let resp = req.send().await.unwrap();
        let code = resp.status().as_u16();
        let _ = resp.bytes().await.unwrap();
        code
    }
}

/// The events of this test's own requests (by user agent).
fn ours(server: &TestServer) -> Vec<AuditEvent> {
    server
        .audit_events()
        .into_iter()
        .filter(|e| e.user_agent == AGENT)
        .collect()
}

#[tokio::test]
async fn every_request_is_audited_once_with_kube_apiservers_fields() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.log");
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .auth(
            AuthConfig::default()
                .rbac()
                .anonymous(false)
                .token("alice-token", UserInfo::new("alice", ["devs"])),
        )
        .audit()
        .audit_log_path(&log)
        .start()
        .await
        .unwrap();
    let client = Client {
        base: server.url(),
        http: reqwest::Client::new(),
    };
    let admin = server.admin_token().to_string();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});

    let created = client
        .request("POST", "/api/v1/namespaces/default/configmaps", &admin)
        .header("content-type", "application/json")
        .header("x-forwarded-for", "10.0.0.1, 10.0.0.2")
        .body(cm.to_string());
    assert_eq!(client.send(created).await, 201);
    let missing = client.request("GET", "/api/v1/namespaces/default/configmaps/nope", &admin);
    assert_eq!(client.send(missing).await, 404);
    let refused = client.request("GET", "/api/v1/namespaces/default/configmaps", "wrong");
    assert_eq!(client.send(refused).await, 401);
    let forbidden = client.request("GET", "/apis/apps/v1/deployments", "alice-token");
    assert_eq!(client.send(forbidden).await, 403);
    let version = client.request("GET", "/version", &admin);
    assert_eq!(client.send(version).await, 200);
    let status = client.request(
        "GET",
        "/apis/apps/v1/namespaces/default/deployments/d/status",
        &admin,
    );
    assert_eq!(client.send(status).await, 404);

    // A watch's event is written when it is opened.
    let watch = client
        .request(
            "GET",
            "/api/v1/namespaces/default/configmaps?watch=true",
            &admin,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(watch.status().as_u16(), 200);
    let mut stream = watch.bytes_stream();
    let first = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
    assert!(
        matches!(first, Ok(Some(Ok(_)))),
        "the watch sends its ADDED event"
    );
    let events = ours(&server);
    assert_eq!(events.len(), 7, "{events:#?}");
    drop(stream);

    for e in &events {
        assert_eq!(
            (e.kind.as_str(), e.api_version.as_str()),
            ("Event", "audit.k8s.io/v1")
        );
        assert_eq!(serde_json::to_value(e.level).unwrap(), "Metadata");
        assert_eq!(serde_json::to_value(e.stage).unwrap(), "ResponseComplete");
        assert!(uuid::Uuid::parse_str(&e.audit_id).is_ok(), "{}", e.audit_id);
        assert!(e.stage_timestamp >= e.request_received_timestamp);
        assert_eq!(e.user_agent, AGENT);
    }
    let mut ids: Vec<&str> = events.iter().map(|e| e.audit_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), events.len(), "audit ids are unique");

    let json: Vec<Value> = events
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            let m = v.as_object_mut().unwrap();
            for volatile in [
                "auditID",
                "requestReceivedTimestamp",
                "stageTimestamp",
                "kind",
                "apiVersion",
                "level",
                "stage",
                "userAgent",
            ] {
                m.remove(volatile);
            }
            // The authorizer's wording is its own (chain/authorization.rs); the event
            // carries it whatever it is.
            if let Some(status) = m.get_mut("responseStatus").and_then(Value::as_object_mut)
                && status["code"] == 403
            {
                let message = status.remove("message").unwrap_or_default();
                assert!(
                    message.as_str().unwrap_or_default().contains("alice"),
                    "{message}"
                );
            }
            v
        })
        .collect();
    let admin_user =
        json!({"username": "admin", "groups": ["system:masters", "system:authenticated"]});
    let allowed =
        json!({"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""});
    assert_eq!(
        json,
        [
            json!({
                "requestURI": "/api/v1/namespaces/default/configmaps",
                "verb": "create",
                "user": admin_user,
                "sourceIPs": ["10.0.0.1", "10.0.0.2", "127.0.0.1"],
                "objectRef": {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "code": 201},
                "annotations": allowed,
            }),
            json!({
                "requestURI": "/api/v1/namespaces/default/configmaps/nope",
                "verb": "get",
                "user": admin_user,
                "sourceIPs": ["127.0.0.1"],
                "objectRef": {"resource": "configmaps", "namespace": "default", "name": "nope", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "status": "Failure", "message": "configmaps \"nope\" not found", "reason": "NotFound", "code": 404},
                "annotations": allowed,
            }),
            json!({
                "requestURI": "/api/v1/namespaces/default/configmaps",
                "verb": "list",
                "user": {},
                "sourceIPs": ["127.0.0.1"],
                "objectRef": {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401},
            }),
            json!({
                "requestURI": "/apis/apps/v1/deployments",
                "verb": "list",
                "user": {"username": "alice", "groups": ["devs", "system:authenticated"]},
                "sourceIPs": ["127.0.0.1"],
                "objectRef": {"resource": "deployments", "apiGroup": "apps", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "status": "Failure", "reason": "Forbidden", "code": 403},
                "annotations": {"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""},
            }),
            json!({
                "requestURI": "/version",
                "verb": "get",
                "user": admin_user,
                "sourceIPs": ["127.0.0.1"],
                "responseStatus": {"metadata": {}, "code": 200},
                "annotations": allowed,
            }),
            json!({
                "requestURI": "/apis/apps/v1/namespaces/default/deployments/d/status",
                "verb": "get",
                "user": admin_user,
                "sourceIPs": ["127.0.0.1"],
                "objectRef": {"resource": "deployments", "namespace": "default", "name": "d", "apiGroup": "apps", "apiVersion": "v1", "subresource": "status"},
                "responseStatus": {"metadata": {}, "status": "Failure", "message": "deployments.apps \"d\" not found", "reason": "NotFound", "code": 404},
                "annotations": allowed,
            }),
            json!({
                "requestURI": "/api/v1/namespaces/default/configmaps?watch=true",
                "verb": "watch",
                "user": admin_user,
                "sourceIPs": ["127.0.0.1"],
                "objectRef": {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "code": 200},
                "annotations": allowed,
            }),
        ]
    );

    // The file holds the same events, one JSON line each.
    let text = std::fs::read_to_string(&log).unwrap();
    let from_file: Vec<AuditEvent> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|e: &AuditEvent| e.user_agent == AGENT)
        .collect();
    assert_eq!(from_file, events);
}

#[tokio::test]
async fn a_log_file_that_cannot_be_opened_stops_the_server_from_starting() {
    let dir = tempfile::tempdir().unwrap();
    let err = TestServer::builder()
        .cluster(ClusterConfig::none())
        .audit_log_path(dir.path().join("no/such/dir/audit.log"))
        .start()
        .await
        .err()
        .expect("the server must not start");
    assert!(err.to_string().starts_with("audit log "), "{err}");
}

#[tokio::test]
async fn nothing_is_recorded_when_auditing_is_off() {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let client = Client {
        base: server.url(),
        http: reqwest::Client::new(),
    };
    let req = client.request("GET", "/version", server.admin_token());
    assert_eq!(client.send(req).await, 200);
    assert!(server.audit_events().is_empty());
}

#[tokio::test]
async fn the_in_process_front_audits_its_users_requests() {
    let server = kubegen_testserver::InProcess::with_auth(
        kubegen_testserver::EngineConfig::default(),
        &AuthConfig::default().audit(),
    )
    .as_user(UserInfo::new("bob", ["system:authenticated"]));
    let resp = server
        .serve(
            http::Request::get("/api/v1/namespaces/default/pods?limit=1")
                .body(Vec::new())
                .unwrap(),
        )
        .await;
    assert_eq!(resp.status().as_u16(), 200);
    let events = server.audit_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0].user.username, "bob");
    assert_eq!(events[0].verb, "list");
    assert_eq!(
        events[0].request_uri,
        "/api/v1/namespaces/default/pods?limit=1"
    );
    assert_eq!(events[0].source_ips, ["127.0.0.1"]);
    assert_eq!(
        events[0].object_ref.as_ref().map(|o| o.resource.as_str()),
        Some("pods")
    );
}

/// The binary's `--audit-log-path`: the file gets a JSON line per request; a file that
/// cannot be opened stops the server at startup.
#[tokio::test]
async fn the_binary_writes_its_audit_log_and_refuses_a_path_it_cannot_open() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .args(["--no-controllers", "--nodes", "0", "--audit-log-path"])
        .arg(dir.path().join("missing/audit.log"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("audit log "), "{stderr}");

    let log = dir.path().join("audit.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .args(["--no-controllers", "--nodes", "0", "--token", "t"])
        .arg("--audit-log-path")
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let code = reqwest::Client::new()
        .get(format!("{}/version", url.trim()))
        .bearer_auth("t")
        .header("user-agent", AGENT)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(code, 200);
    let text = std::fs::read_to_string(&log).unwrap();
    let events: Vec<AuditEvent> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &AuditEvent| e.user_agent == AGENT)
        .collect();
    assert_eq!(events.len(), 1, "{text}");
    assert_eq!(events[0].request_uri, "/version");
    assert_eq!(events[0].user.username, "admin");
}
