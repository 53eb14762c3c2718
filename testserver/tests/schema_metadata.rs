//! Schema enforcement gaps closed by issue 40 item 6, over HTTP:
//!
//! * unknown fields under `metadata` are dropped and named by `fieldValidation`, for custom
//!   resources (at the root and inside `x-kubernetes-embedded-resource` objects) and for
//!   built-in kinds: kube-apiserver decodes `metadata` into ObjectMeta
//!   (apiextensions-apiserver `pkg/apiserver/schema/objectmeta/coerce.go`
//!   `GetObjectMetaWithOptions` / `CoerceWithOptions` with `ReturnUnknownFieldPaths`, called
//!   from `customresource_handler.go` before and after pruning; apimachinery's strict JSON
//!   decoding for built-ins);
//! * a CRD whose CEL rule does not type-check against its schema is refused
//!   (`pkg/apiserver/schema/cel/compilation.go`: `compilation failed: ` + cel-go's issues;
//!   `pkg/apis/apiextensions/validation/validation.go` puts it on the rule);
//! * a CRD whose `default` violates its own schema is refused
//!   (`pkg/apiserver/schema/defaulting/validation.go` `ValidateDefaults`).

#![allow(clippy::unwrap_used)] // test helpers: a failed request is a failed test

use kubegen_testserver::{ClusterConfig, TestServer};
use serde_json::{Value, json};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const FOOS: &str = "/apis/example.com/v1/namespaces/default/foos";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

struct Api {
    base: String,
    http: reqwest::Client,
}

async fn server() -> (TestServer, Api) {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let api = Api {
        base: server.url(),
        http: reqwest::Client::new(),
    };
    (server, api)
}

impl Api {
    /// A request returning the code, the body and the `Warning` headers.
    async fn send(&self, method: &str, path: &str, body: &Value) -> (u16, Value, Vec<String>) {
        let resp = self
            .http
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                format!("{}{path}", self.base),
            )
            .header("content-type", "application/json")
            .body(body.to_string())
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
        let bytes = resp.bytes().await.unwrap();
        (
            code,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            warnings,
        )
    }
}

fn crd(schema: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Foo", "plural": "foos", "singular": "foo", "listKind": "FooList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema}}]}})
}

fn foo_schema() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer"},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true}}}}})
}

fn bad_foo() -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Foo",
        "metadata": {"name": "a", "labels": {"l": "v"}, "unknownMeta": "x",
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u", "color": "red"}]},
        "spec": {"replicas": 1, "x": true,
            "template": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "t", "junk": 1}, "spec": {"anything": true}}}})
}

/// customresource_handler.go `unstructuredSchemaCoercer.apply`: the root's metadata is
/// decoded into ObjectMeta first (its unknown fields first), then the object is pruned,
/// then embedded resources' metadata is coerced; Strict refuses naming all of them as
/// create.go's `transformDecodeError` does (400), Warn stores the object without them
/// and warns once per field.
#[tokio::test]
async fn custom_resource_metadata_unknown_fields() {
    let (_s, api) = server().await;
    let (code, body, _) = api.send("POST", CRDS, &crd(foo_schema())).await;
    assert_eq!(code, 201, "{body}");

    let (code, status, _) = api
        .send(
            "POST",
            &format!("{FOOS}?fieldValidation=Strict"),
            &bad_foo(),
        )
        .await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(
        status["message"],
        "Foo in version \"v1\" cannot be handled as a Foo: strict decoding error: \
         unknown field \"metadata.ownerReferences[0].color\", unknown field \"metadata.unknownMeta\", \
         unknown field \"spec.x\", unknown field \"spec.template.metadata.junk\""
    );

    let (code, created, warnings) = api.send("POST", FOOS, &bad_foo()).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"metadata.ownerReferences[0].color\"""#,
            r#"299 - "unknown field \"metadata.unknownMeta\"""#,
            r#"299 - "unknown field \"spec.x\"""#,
            r#"299 - "unknown field \"spec.template.metadata.junk\"""#,
        ]
    );
    // (what a read returns: the owner does not exist, so the garbage collector may
    // already have deleted the object)
    let stored = created;
    assert!(stored["metadata"].get("unknownMeta").is_none(), "{stored}");
    assert_eq!(stored["metadata"]["labels"], json!({"l": "v"}));
    assert!(
        stored["metadata"]["ownerReferences"][0]
            .get("color")
            .is_none()
    );
    assert_eq!(
        stored["spec"]["template"]["metadata"],
        json!({"name": "t"}),
        "embedded metadata is ObjectMeta too"
    );
    assert_eq!(
        stored["spec"]["template"]["spec"],
        json!({"anything": true}),
        "preserved"
    );

    // Ignore drops them silently.
    let mut quiet = bad_foo();
    quiet["metadata"]["name"] = json!("b");
    let (code, _, warnings) = api
        .send("POST", &format!("{FOOS}?fieldValidation=Ignore"), &quiet)
        .await;
    assert_eq!((code, warnings.len()), (201, 0));
}

/// apimachinery strict decoding of a built-in kind: `metadata` is ObjectMeta, so an
/// unknown field in it is `unknown field "metadata.unknownMeta"` (400 under Strict, a
/// warning under Warn) and is not stored.
#[tokio::test]
async fn builtin_metadata_unknown_fields() {
    let (_s, api) = server().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "unknownMeta": 1}, "data": {"k": "v"}});
    let (code, status, _) = api
        .send("POST", &format!("{CMS}?fieldValidation=Strict"), &cm)
        .await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"metadata.unknownMeta\""
    );
    let (code, created, warnings) = api.send("POST", CMS, &cm).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        warnings,
        [r#"299 - "unknown field \"metadata.unknownMeta\"""#]
    );
    assert!(created["metadata"].get("unknownMeta").is_none());
}

/// compilation.go + cel-go's checker: a rule selecting a field its schema lacks does not
/// compile, so validation.go refuses the CRD (422) with the issue on the rule.
#[tokio::test]
async fn crd_rule_with_undefined_field_is_refused() {
    let (_s, api) = server().await;
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"replicas": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.nosuch > 0"}]}}});
    let (code, status, _) = api.send("POST", CRDS, &crd(schema)).await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"foos.example.com\" is invalid: \
         spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: \
         Invalid value: \"self.nosuch > 0\": compilation failed: ERROR: <input>:1:5: undefined field 'nosuch'\n | self.nosuch > 0\n | ....^"
    );
    // The same rule on a schema declaring the field is accepted; so is one through a
    // list's items and a map's values.
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"nosuch": {"type": "integer"},
            "l": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        "x-kubernetes-validations": [{"rule": "self.nosuch > 0 && self.l.all(i, i.a != '')"}]}}});
    let (code, body, _) = api.send("POST", CRDS, &crd(schema)).await;
    assert_eq!(code, 201, "{body}");
}

/// defaulting/validation.go `ValidateDefaults`: each default is validated against its own
/// node (type, enum, maximum, pattern, required) and must not carry unknown fields; the
/// CRD is refused with 422 naming `<node>.default`.
#[tokio::test]
async fn crd_default_violating_its_schema_is_refused() {
    let (_s, api) = server().await;
    let p = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties";
    for (prop, want) in [
        (
            json!({"type": "integer", "maximum": 10, "default": 11}),
            format!(
                "{p}[x].default: Invalid value: 11: body in body should be less than or equal to 10"
            ),
        ),
        (
            json!({"type": "string", "enum": ["A", "B"], "default": "C"}),
            format!("{p}[x].default: Unsupported value: \"C\": supported values: \"A\", \"B\""),
        ),
        (
            json!({"type": "integer", "default": "one"}),
            format!(
                "{p}[x].default: Invalid value: \"one\": body in body must be of type integer: \"string\""
            ),
        ),
        (
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}, "default": {}}),
            format!("{p}[x].default.a: Required value"),
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": 1}}),
            format!(
                "{p}[x].default: Invalid value: map[string]interface {{}}{{\"b\":1}}: must not have unknown fields"
            ),
        ),
    ] {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"x": prop}}}});
        let (code, status, _) = api.send("POST", CRDS, &crd(schema)).await;
        assert_eq!(
            (code, status["reason"].as_str()),
            (422, Some("Invalid")),
            "{status}"
        );
        let message = status["message"].as_str().unwrap();
        assert_eq!(
            message,
            format!(
                "CustomResourceDefinition.apiextensions.k8s.io \"foos.example.com\" is invalid: {want}"
            )
        );
    }
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"x": {"type": "integer", "maximum": 10, "default": 10}}}}});
    let (code, body, _) = api.send("POST", CRDS, &crd(schema)).await;
    assert_eq!(code, 201, "{body}");
}
