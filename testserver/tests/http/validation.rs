//! Schema enforcement over HTTP (issue 17), each rule as kube-apiserver has it:
//! `fieldValidation` (KEP-2885, e2e `test/e2e/apimachinery/field_validation.go`,
//! `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/{create,update,patch}.go`), CRD
//! structural schemas, pruning, defaulting, OpenAPI validation and CEL rules
//! (apiextensions-apiserver `pkg/apiserver/schema`, `pkg/registry/customresource/strategy.go`;
//! CRD docs "Specifying a structural schema", "Field pruning", "Defaulting", "Validation
//! rules"), and the real CRDs in `testdata/crds`.

use kubegen_testserver::{EngineConfig, InProcess};
use serde_json::{Value, json};

use crate::common::*;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const FOOS: &str = "/apis/example.com/v1/namespaces/default/foos";
const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

/// A request returning the code, the body and the `Warning` headers.
async fn send(
    api: &Api,
    method: &str,
    path: &str,
    body: &str,
    content_type: &str,
) -> (u16, Value, Vec<String>) {
    let resp = api
        .http
        .request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            format!("{}{path}", api.base),
        )
        .header("content-type", content_type)
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let code = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let body = resp.bytes().await.unwrap();
    (
        code,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
        warnings,
    )
}

fn foo_schema(replicas_default: bool) -> Value {
    let mut replicas = json!({"type": "integer", "minimum": 0, "maximum": 10});
    if replicas_default {
        replicas["default"] = json!(1);
    }
    json!({"type": "object", "properties": {
        "spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "!has(self.min) || !has(self.replicas) || self.min <= self.replicas",
                "message": "min must not exceed replicas"}],
            "properties": {
                "replicas": replicas,
                "min": {"type": "integer"},
                "mode": {"type": "string", "enum": ["Fast", "Safe"]},
                "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "name is immutable"}]},
                "ports": {"type": "array", "items": {"type": "object", "required": ["port"], "properties": {
                    "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}}}},
        "status": {"type": "object", "properties": {"ready": {"type": "integer", "minimum": 0}}}}})
}

fn foo_crd(schema: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Foo", "plural": "foos", "singular": "foo", "listKind": "FooList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.ready"}},
                "schema": {"openAPIV3Schema": schema}}]}})
}

async fn with_foos() -> (kubegen_testserver::TestServer, Api) {
    let (s, api) = server().await;
    let (code, body) = api.post(CRDS, &foo_crd(foo_schema(true))).await;
    assert_eq!(code, 201, "{body}");
    (s, api)
}

fn foo(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": name}, "spec": spec})
}

/// field_validation.go ("should detect unknown and duplicate fields of a CR"); handlers
/// create.go/update.go answer a strict decoding error as 400 BadRequest naming every field
/// (`transformDecodeError`: `Foo in version "v1" cannot be handled as a Foo: ...`);
/// Warn (the default) stores the object without them and warns once per field; Ignore
/// drops them silently.
#[tokio::test]
async fn cr_field_validation_on_create_and_update() {
    let (_s, api) = with_foos().await;
    let raw = r#"{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "a"},
        "spec": {"replicas": 1, "replicas": 2, "x": true}}"#;
    let (code, status, _) = send(
        &api,
        "POST",
        &format!("{FOOS}?fieldValidation=Strict"),
        raw,
        "application/json",
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(
        status["message"],
        "Foo in version \"v1\" cannot be handled as a Foo: strict decoding error: unknown field \"spec.x\", duplicate field \"spec.replicas\""
    );
    let (code, obj, warnings) = send(&api, "POST", FOOS, raw, "application/json").await;
    assert_eq!(code, 201, "{obj}");
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"spec.x\"""#,
            r#"299 - "duplicate field \"spec.replicas\"""#
        ]
    );
    assert_eq!(
        obj["spec"],
        json!({"replicas": 2}),
        "pruned, last duplicate wins"
    );
    let (_, stored) = api.get(&format!("{FOOS}/a")).await;
    assert!(stored["spec"].get("x").is_none());
    let raw_b = raw.replace("\"a\"", "\"b\"");
    let (code, obj, warnings) = send(
        &api,
        "POST",
        &format!("{FOOS}?fieldValidation=Ignore"),
        &raw_b,
        "application/json",
    )
    .await;
    assert_eq!((code, warnings.len()), (201, 0));
    assert!(obj["spec"].get("x").is_none());
    // update (PUT)
    let mut update = stored.clone();
    update["spec"]["y"] = json!(1);
    let (code, status, _) = send(
        &api,
        "PUT",
        &format!("{FOOS}/a?fieldValidation=Strict"),
        &update.to_string(),
        "application/json",
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "Foo in version \"v1\" cannot be handled as a Foo: strict decoding error: unknown field \"spec.y\""
    );
    let (code, obj, warnings) = send(
        &api,
        "PUT",
        &format!("{FOOS}/a"),
        &update.to_string(),
        "application/json",
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(warnings, [r#"299 - "unknown field \"spec.y\"""#]);
    assert!(obj["spec"].get("y").is_none());
}

/// handlers/patch.go: a JSON or merge patch whose result has unknown fields is, under
/// Strict, `errors.NewInvalid(schema.GroupKind{}, "", field.Invalid(field.NewPath("patch"),
/// patchedObjJS, strictErr))` (422, not 400); Warn warns; apply (`applyPatcher`) answers a
/// strict failure with 400 BadRequest.
#[tokio::test]
async fn cr_field_validation_on_patch_and_apply() {
    let (_s, api) = with_foos().await;
    assert_eq!(
        api.post(FOOS, &foo("p", json!({"replicas": 1}))).await.0,
        201
    );
    let path = format!("{FOOS}/p");
    let (code, status, _) = send(
        &api,
        "PATCH",
        &format!("{path}?fieldValidation=Strict"),
        r#"{"spec": {"x": 1}}"#,
        MERGE,
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(status["details"]["causes"][0]["field"], "patch");
    let msg = status["message"].as_str().unwrap();
    assert!(
        msg.starts_with(" \"\" is invalid: patch: Invalid value: \"{"),
        "{msg}"
    );
    assert!(
        msg.ends_with(": strict decoding error: unknown field \"spec.x\""),
        "{msg}"
    );
    let (code, _, _) = send(
        &api,
        "PATCH",
        &format!("{path}?fieldValidation=Strict"),
        r#"[{"op": "add", "path": "/spec/x", "value": 1}]"#,
        JSON_PATCH,
    )
    .await;
    assert_eq!(code, 422);
    let (code, obj, warnings) = send(
        &api,
        "PATCH",
        &path,
        r#"{"spec": {"x": 1, "min": 1}}"#,
        MERGE,
    )
    .await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(warnings, [r#"299 - "unknown field \"spec.x\"""#]);
    assert_eq!(obj["spec"], json!({"replicas": 1, "min": 1}));
    // server-side apply
    let intent = r#"{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "p"},
        "spec": {"replicas": 3, "z": 1}}"#;
    let (code, status, _) = send(
        &api,
        "PATCH",
        &format!("{path}?fieldManager=me&fieldValidation=Strict"),
        intent,
        APPLY,
    )
    .await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "Foo in version \"v1\" cannot be handled as a Foo: strict decoding error: unknown field \"spec.z\""
    );
    let (code, obj, warnings) = send(
        &api,
        "PATCH",
        &format!("{path}?fieldManager=me"),
        intent,
        APPLY,
    )
    .await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(warnings, [r#"299 - "unknown field \"spec.z\"""#]);
    assert_eq!(obj["spec"]["replicas"], 3);
    assert!(obj["spec"].get("z").is_none());
}

/// apimachinery `ValidateCreateOptions` / `ValidatePatchOptions`: any directive other than
/// Strict, Warn, Ignore (or none) is a 422 on the options.
#[tokio::test]
async fn unknown_directive_is_invalid() {
    let (_s, api) = server().await;
    let (code, status, _) = send(
        &api,
        "POST",
        "/api/v1/namespaces/default/configmaps?fieldValidation=strict",
        &cm("c", json!({})).to_string(),
        "application/json",
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"Ignore\", \"Strict\", \"Warn\""
    );
}

/// field_validation.go ("should detect unknown and duplicate fields of a typed object"):
/// a Deployment with `spec.unknownField`, on create, update, strategic and merge patch and
/// apply; the schema is k8s-openapi's (kube-apiserver's `/openapi/v3` definitions).
#[tokio::test]
async fn builtin_field_validation() {
    let (_s, api) = server().await;
    let mut d = deployment("web");
    d["spec"]["unknownField"] = json!("x");
    let body = d.to_string();
    let (code, status, _) = send(
        &api,
        "POST",
        &format!("{DEPLOYS}?fieldValidation=Strict"),
        &body,
        "application/json",
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.unknownField\""
    );
    let (code, obj, warnings) = send(&api, "POST", DEPLOYS, &body, "application/json").await;
    assert_eq!(code, 201, "{obj}");
    assert_eq!(warnings, [r#"299 - "unknown field \"spec.unknownField\"""#]);
    assert!(obj["spec"].get("unknownField").is_none());
    let path = format!("{DEPLOYS}/web");
    let mut update = obj.clone();
    update["spec"]["template"]["spec"]["containers"][0]["foo"] = json!(1);
    let (code, status, _) = send(
        &api,
        "PUT",
        &format!("{path}?fieldValidation=Strict"),
        &update.to_string(),
        "application/json",
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.template.spec.containers[0].foo\""
    );
    let (code, _, warnings) = send(
        &api,
        "PUT",
        &format!("{path}?fieldValidation=Ignore"),
        &update.to_string(),
        "application/json",
    )
    .await;
    assert_eq!((code, warnings.len()), (200, 0));
    // strategic merge patch: 422 on `patch` (patch.go strategicPatchObject)
    let (code, status, _) = send(
        &api,
        "PATCH",
        &format!("{path}?fieldValidation=Strict"),
        r#"{"spec": {"unknownField": 1}}"#,
        STRATEGIC,
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(status["details"]["causes"][0]["field"], "patch");
    assert_eq!(
        status["message"],
        " \"\" is invalid: patch: Invalid value: \"map[spec:map[unknownField:1]]\": strict decoding error: unknown field \"spec.unknownField\""
    );
    let (code, _, warnings) = send(
        &api,
        "PATCH",
        &path,
        r#"{"spec": {"unknownField": 1}}"#,
        MERGE,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(warnings, [r#"299 - "unknown field \"spec.unknownField\"""#]);
    let mut intent = deployment("web");
    intent["spec"]["unknownField"] = json!(1);
    let (code, _, _) = send(
        &api,
        "PATCH",
        &format!("{path}?fieldManager=me&fieldValidation=Strict"),
        &intent.to_string(),
        APPLY,
    )
    .await;
    assert_eq!(code, 400);
    let (_, stored) = api.get(&path).await;
    assert!(stored["spec"].get("unknownField").is_none());
}

/// CRD docs "Field pruning" and "Defaulting": unknown fields go, defaults are applied on
/// create (inside array items too) and when an object is read (a default added to the CRD
/// later shows on get, list and watch: "when reading from etcd").
#[tokio::test]
async fn pruning_and_defaulting() {
    let (_s, api) = server().await;
    let (code, _) = api.post(CRDS, &foo_crd(foo_schema(false))).await;
    assert_eq!(code, 201);
    let (code, obj) = api
        .post(
            FOOS,
            &foo(
                "d",
                json!({"ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "junk": 1}]}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{obj}");
    assert_eq!(
        obj["spec"]["ports"],
        json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])
    );
    assert!(obj["spec"].get("replicas").is_none());
    // the CRD gains a default: reads show it
    let (_, mut crd) = api.get(&format!("{CRDS}/foos.example.com")).await;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = foo_schema(true);
    let (code, body) = api.put(&format!("{CRDS}/foos.example.com"), &crd).await;
    assert_eq!(code, 200, "{body}");
    let (_, got) = api.get(&format!("{FOOS}/d")).await;
    assert_eq!(got["spec"]["replicas"], 1);
    let (_, list) = api.get(FOOS).await;
    assert_eq!(list["items"][0]["spec"]["replicas"], 1);
    let mut w = api.watch(&format!("{FOOS}?watch=true")).await;
    let ev = w.next_change().await.unwrap();
    assert_eq!(ev["object"]["spec"]["replicas"], 1);
}

/// apiextensions-apiserver `pkg/apiserver/validation` + `apierrors.NewInvalid`: the issue's
/// message, with one `details.causes[]` entry per error.
#[tokio::test]
async fn invalid_values_are_422_with_causes() {
    let (_s, api) = with_foos().await;
    let (code, status) = api.post(FOOS, &foo("x", json!({"replicas": 11}))).await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        status["message"],
        "Foo.example.com \"x\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    );
    assert_eq!(
        status["details"],
        json!({"name": "x", "group": "example.com", "kind": "Foo", "causes": [{
            "reason": "FieldValueInvalid", "field": "spec.replicas",
            "message": "Invalid value: 11: spec.replicas in body should be less than or equal to 10"}]})
    );
    let (code, status) = api
        .post(
            FOOS,
            &foo("y", json!({"mode": "Slow", "ports": [{"protocol": "UDP"}]})),
        )
        .await;
    assert_eq!(code, 422);
    let causes: Vec<(&str, &str)> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["field"].as_str().unwrap(), c["reason"].as_str().unwrap()))
        .collect();
    assert!(
        causes.contains(&("spec.mode", "FieldValueNotSupported")),
        "{causes:?}"
    );
    assert!(
        causes.contains(&("spec.ports[0].port", "FieldValueRequired")),
        "{causes:?}"
    );
}

/// CRD docs "Validation rules": a failing rule refuses the write with its message; a
/// transition rule (`oldSelf`) applies on update only.
#[tokio::test]
async fn cel_rules_refuse_with_their_message() {
    let (_s, api) = with_foos().await;
    let (code, status) = api
        .post(FOOS, &foo("c", json!({"replicas": 1, "min": 2})))
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Foo.example.com \"c\" is invalid: spec: Invalid value: \"object\": min must not exceed replicas"
    );
    let (code, _) = api.post(FOOS, &foo("c", json!({"name": "a"}))).await;
    assert_eq!(code, 201);
    let (code, status) = api
        .patch(&format!("{FOOS}/c"), MERGE, r#"{"spec": {"name": "b"}}"#)
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Foo.example.com \"c\" is invalid: spec.name: Invalid value: \"string\": name is immutable"
    );
}

/// customresource `status_strategy.go`: the status subresource validates the status
/// against its schema (and reports status errors only); the main resource ignores status.
#[tokio::test]
async fn status_subresource_is_validated() {
    let (_s, api) = with_foos().await;
    let (code, obj) = api.post(FOOS, &foo("s", json!({"replicas": 1}))).await;
    assert_eq!(code, 201);
    let mut with_status = obj.clone();
    with_status["status"] = json!({"ready": -1});
    let (code, status) = api.put(&format!("{FOOS}/s/status"), &with_status).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Foo.example.com \"s\" is invalid: status.ready: Invalid value: -1: status.ready in body should be greater than or equal to 0"
    );
    let (code, _) = api.put(&format!("{FOOS}/s"), &with_status).await;
    assert_eq!(code, 200, "the main resource ignores status");
    with_status["status"] = json!({"ready": 1, "bogus": true});
    let (code, obj, warnings) = send(
        &api,
        "PUT",
        &format!("{FOOS}/s/status"),
        &with_status.to_string(),
        "application/json",
    )
    .await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(obj["status"], json!({"ready": 1}));
    assert_eq!(warnings, [r#"299 - "unknown field \"status.bogus\"""#]);
}

/// customresource `ScaleREST.Update`: a write through `/scale` updates the custom resource
/// through its own strategy, so the new replicas are validated against the schema.
#[tokio::test]
async fn scale_subresource_is_validated() {
    let (_s, api) = with_foos().await;
    assert_eq!(
        api.post(FOOS, &foo("sc", json!({"replicas": 1}))).await.0,
        201
    );
    let scale = |n: i64| {
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "sc", "namespace": "default"}, "spec": {"replicas": n}})
    };
    let (code, status) = api.put(&format!("{FOOS}/sc/scale"), &scale(11)).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "Foo.example.com \"sc\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    );
    let (code, s) = api.put(&format!("{FOOS}/sc/scale"), &scale(5)).await;
    assert_eq!((code, &s["spec"]["replicas"]), (200, &json!(5)));
}

/// apiextensions-apiserver `validation.go` (structural schema, CEL compilation): a CRD
/// whose schema is not structural or whose rule does not compile is a 422 Invalid CRD.
#[tokio::test]
async fn crds_with_bad_schemas_are_refused() {
    let (_s, api) = server().await;
    let (code, status) = api
        .post(
            CRDS,
            &foo_crd(json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}})),
        )
        .await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    let msg = status["message"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "CustomResourceDefinition.apiextensions.k8s.io \"foos.example.com\" is invalid: spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value"
        ),
        "{msg}"
    );
    let (code, status) = api
        .post(
            CRDS,
            &foo_crd(json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a ==", "message": "m"}]})),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule"
    );
    let (code, _) = api.get("/apis/example.com/v1").await;
    assert_eq!(code, 404, "a refused CRD is not served");
}

/// The real CRDs of `testdata/crds`: valid objects are accepted; objects breaking their own
/// CEL rules or schema constraints are refused with the rule's message.
#[tokio::test]
async fn real_crds_enforce_their_rules() {
    let (s, api) = server().await;
    for f in [
        "cert-manager.io_certificates.yaml",
        "gateway.networking.k8s.io_gatewayclasses.yaml",
        "gateway.networking.k8s.io_gateways.yaml",
        "monitoring.coreos.com_servicemonitors.yaml",
    ] {
        s.load_crd_file(&crd_path(f)).unwrap();
    }
    let gws = "/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways";
    let gw = |name: &str, listeners: Value| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": name}, "spec": {"gatewayClassName": "gc", "listeners": listeners}})
    };
    let (code, ok) = api
        .post(
            gws,
            &gw(
                "ok",
                json!([{"name": "http", "port": 80, "protocol": "HTTP"}]),
            ),
        )
        .await;
    assert_eq!(code, 201, "{ok}");
    assert_eq!(
        ok["spec"]["listeners"][0]["allowedRoutes"]["namespaces"]["from"], "Same",
        "defaulted from the CRD"
    );
    for (listeners, want) in [
        (
            json!([{"name": "a", "port": 80, "protocol": "HTTP", "tls": {"mode": "Terminate", "certificateRefs": [{"name": "c"}]}}]),
            "spec.listeners: Invalid value: \"array\": tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
        ),
        (
            json!([{"name": "a", "port": 80, "protocol": "TCP", "hostname": "x.example.com"}]),
            "spec.listeners: Invalid value: \"array\": hostname must not be specified for protocols ['TCP', 'UDP']",
        ),
        (
            json!([{"name": "a", "port": 443, "protocol": "TLS"}]),
            "spec.listeners: Invalid value: \"array\": tls mode must be set for protocol TLS",
        ),
        (
            json!([{"name": "a", "port": 80, "protocol": "HTTP"}, {"name": "b", "port": 80, "protocol": "HTTP"}]),
            "spec.listeners: Invalid value: \"array\": Combination of port, protocol and hostname must be unique for each listener",
        ),
        (
            json!([{"name": "a", "port": 70000, "protocol": "HTTP"}]),
            "spec.listeners[0].port: Invalid value: 70000: spec.listeners[0].port in body should be less than or equal to 65535",
        ),
    ] {
        let (code, status) = api.post(gws, &gw("bad", listeners)).await;
        assert_eq!(code, 422, "{status}");
        assert_eq!(
            status["message"],
            format!("Gateway.gateway.networking.k8s.io \"bad\" is invalid: {want}")
        );
    }
    // GatewayClass: `controllerName` is immutable (a transition rule)
    let gcs = "/apis/gateway.networking.k8s.io/v1/gatewayclasses";
    let (code, _) = api
        .post(
            gcs,
            &json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                "metadata": {"name": "gc"}, "spec": {"controllerName": "example.com/a"}}),
        )
        .await;
    assert_eq!(code, 201);
    let (code, status) = api
        .patch(
            &format!("{gcs}/gc"),
            MERGE,
            r#"{"spec": {"controllerName": "example.com/b"}}"#,
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "GatewayClass.gateway.networking.k8s.io \"gc\" is invalid: spec.controllerName: Invalid value: \"string\": field is immutable"
    );
    // cert-manager Certificate: required fields
    let certs = "/apis/cert-manager.io/v1/namespaces/default/certificates";
    let cert = |spec: Value| json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"}, "spec": spec});
    let (code, status) = api
        .post(certs, &cert(json!({"issuerRef": {"kind": "Issuer"}})))
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Certificate.cert-manager.io \"c\" is invalid: [spec.secretName: Required value, spec.issuerRef.name: Required value]"
    );
    let (code, _) = api
        .post(
            certs,
            &cert(json!({"secretName": "s", "dnsNames": ["a.example.com"], "issuerRef": {"name": "i", "kind": "Issuer"}})),
        )
        .await;
    assert_eq!(code, 201);
    // ServiceMonitor: an enum
    let sms = "/apis/monitoring.coreos.com/v1/namespaces/default/servicemonitors";
    let sm = |scheme: &str| {
        json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "m"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "endpoints": [{"port": "web", "scheme": scheme}]}})
    };
    let (code, status) = api.post(sms, &sm("ftp")).await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "ServiceMonitor.monitoring.coreos.com \"m\" is invalid: spec.endpoints[0].scheme: Unsupported value: \"ftp\": supported values: \"http\", \"https\", \"HTTP\", \"HTTPS\""
    );
    assert_eq!(api.post(sms, &sm("https")).await.0, 201);
}

/// The off switch (`EngineConfig::schema_validation(false)`): the old permissive mode
/// stores objects as sent.
#[tokio::test]
async fn schema_validation_off_is_permissive() {
    let (_s, api) = server_with(EngineConfig::default().schema_validation(false)).await;
    assert_eq!(api.post(CRDS, &foo_crd(foo_schema(true))).await.0, 201);
    let (code, obj) = api
        .post(
            &format!("{FOOS}?fieldValidation=Strict"),
            &foo("x", json!({"replicas": 11, "x": 1})),
        )
        .await;
    assert_eq!(code, 201, "{obj}");
    assert_eq!(obj["spec"], json!({"replicas": 11, "x": 1}));
    let mut d = deployment("web");
    d["spec"]["unknownField"] = json!(1);
    let (code, obj) = api
        .post(&format!("{DEPLOYS}?fieldValidation=Strict"), &d)
        .await;
    assert_eq!(code, 201);
    assert_eq!(obj["spec"]["unknownField"], 1);
}

/// The in-process front (fake clientsets) enforces the same rules, and has the same switch.
#[tokio::test]
async fn in_process_front_enforces_too() {
    let mut d = deployment("web");
    d["spec"]["unknownField"] = json!(1);
    let request = || {
        http::Request::post(format!("{DEPLOYS}?fieldValidation=Strict"))
            .header("content-type", "application/json")
            .body(d.to_string().into_bytes())
            .unwrap()
    };
    let strict = InProcess::new().serve(request()).await;
    assert_eq!(strict.status().as_u16(), 400);
    let off = InProcess::with_config(EngineConfig::default().schema_validation(false))
        .serve(request())
        .await;
    assert_eq!(off.status().as_u16(), 201);
}
