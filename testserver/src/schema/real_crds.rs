//! The real CRDs of issue 17 (cert-manager Certificate, Gateway API Gateway and
//! GatewayClass, Prometheus ServiceMonitor; `testdata/crds/`): every version compiles
//! (structural, CEL), valid objects pass, and objects breaking one of the CRD's own schema
//! constraints or CEL rules are refused with that constraint's message.

use serde_json::{Value, json};

use super::{CrdSchema, FieldValidation, Refused, Scope};

fn load(file: &str) -> Value {
    let path = format!("{}/testdata/crds/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("testdata CRD");
    serde_saphyr::from_str(&text).expect("CRD YAML")
}

fn compile(file: &str, version: &str) -> CrdSchema {
    let crd = load(file);
    let versions = crd["spec"]["versions"].as_array().expect("versions");
    let (i, v) = versions
        .iter()
        .enumerate()
        .find(|(_, v)| v["name"] == version)
        .expect("version present");
    let group = crd["spec"]["group"].as_str().expect("group");
    let kind = crd["spec"]["names"]["kind"].as_str().expect("kind");
    CrdSchema::compile(group, kind, v, i).unwrap_or_else(|e| {
        panic!(
            "{file} {version}: {:#?}",
            e.iter().map(ToString::to_string).collect::<Vec<_>>()
        )
    })
}

/// Messages of refusing `obj` (updating `old` if given), or empty when admitted.
fn refusal(s: &CrdSchema, mut obj: Value, old: Option<&Value>) -> Vec<String> {
    match s.admit(&mut obj, old, &[], FieldValidation::Strict, Scope::Main) {
        Ok(_) => vec![],
        Err(Refused::Strict(m)) => vec![m],
        Err(Refused::Invalid(e)) => e
            .errors
            .iter()
            .filter(|e| e.field != "<nil>")
            .map(ToString::to_string)
            .collect(),
    }
}

/// apiextensions-apiserver CRD create validation: all versions of the four CRDs are
/// structural and their CEL rules compile.
#[test]
fn all_real_crds_compile() {
    for file in [
        "cert-manager.io_certificates.yaml",
        "gateway.networking.k8s.io_gateways.yaml",
        "gateway.networking.k8s.io_gatewayclasses.yaml",
        "monitoring.coreos.com_servicemonitors.yaml",
    ] {
        let crd = load(file);
        for v in crd["spec"]["versions"].as_array().expect("versions") {
            let s = compile(file, v["name"].as_str().expect("name"));
            assert_eq!(
                s.has_status(),
                v.pointer("/subresources/status").is_some(),
                "{file}"
            );
        }
    }
}

fn gateway(listeners: Value) -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": "gw", "namespace": "default"},
        "spec": {"gatewayClassName": "gc", "listeners": listeners}})
}

/// Gateway API v1 Gateway: a valid Gateway passes and is defaulted
/// (`allowedRoutes.namespaces.from: Same`, CRD docs "Defaulting").
#[test]
fn gateway_valid_and_defaulted() {
    let s = compile("gateway.networking.k8s.io_gateways.yaml", "v1");
    let mut gw = gateway(json!([
        {"name": "http", "port": 80, "protocol": "HTTP"},
        {"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "a.example.com",
         "tls": {"mode": "Terminate", "certificateRefs": [{"name": "cert"}]}}]));
    s.admit(&mut gw, None, &[], FieldValidation::Strict, Scope::Main)
        .expect("valid Gateway");
    assert_eq!(
        gw["spec"]["listeners"][0]["allowedRoutes"]["namespaces"]["from"],
        "Same"
    );
}

/// Gateway API CEL rules on `spec.listeners` and `spec.addresses`, each refused with
/// its own message (CRD docs "Validation rules").
#[test]
fn gateway_cel_rules_refuse_with_their_messages() {
    let s = compile("gateway.networking.k8s.io_gateways.yaml", "v1");
    let cases = [
        (
            gateway(
                json!([{"name": "a", "port": 80, "protocol": "HTTP", "tls": {"mode": "Terminate", "certificateRefs": [{"name": "c"}]}}]),
            ),
            "spec.listeners: Invalid value: \"array\": tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
        ),
        (
            gateway(
                json!([{"name": "a", "port": 80, "protocol": "TCP", "hostname": "x.example.com"}]),
            ),
            "spec.listeners: Invalid value: \"array\": hostname must not be specified for protocols ['TCP', 'UDP']",
        ),
        (
            gateway(json!([{"name": "a", "port": 443, "protocol": "TLS"}])),
            "spec.listeners: Invalid value: \"array\": tls mode must be set for protocol TLS",
        ),
        (
            gateway(
                json!([{"name": "a", "port": 80, "protocol": "HTTP"}, {"name": "b", "port": 80, "protocol": "HTTP"}]),
            ),
            "spec.listeners: Invalid value: \"array\": Combination of port, protocol and hostname must be unique for each listener",
        ),
        (
            gateway(
                json!([{"name": "a", "port": 443, "protocol": "HTTPS", "tls": {"mode": "Terminate", "certificateRefs": [], "options": {}}}]),
            ),
            "spec.listeners[0].tls: Invalid value: \"object\": certificateRefs or options must be specified when mode is Terminate",
        ),
    ];
    for (obj, want) in cases {
        assert_eq!(refusal(&s, obj, None), vec![want.to_string()]);
    }
    let mut with_addr = gateway(json!([{"name": "a", "port": 80, "protocol": "HTTP"}]));
    with_addr["spec"]["addresses"] = json!([{"type": "Hostname", "value": "Bad_Host"}]);
    let got = refusal(&s, with_addr, None);
    assert!(
        got.iter().any(|m| m.starts_with("spec.addresses[0]: Invalid value: \"object\": Hostname value must be empty or contain only valid characters")),
        "{got:#?}"
    );
    let mut labels = gateway(json!([{"name": "a", "port": 80, "protocol": "HTTP"}]));
    labels["spec"]["infrastructure"] = json!({"labels": {"-bad": "x"}});
    assert!(
        refusal(&s, labels, None)
            .iter()
            .any(|m| m
                .contains("Label keys must be in the form of an optional DNS subdomain prefix")),
    );
}

/// Gateway API schema constraints: port maximum, required fields, list-type map keys
/// (listtype/validation.go), minLength.
#[test]
fn gateway_schema_constraints() {
    let s = compile("gateway.networking.k8s.io_gateways.yaml", "v1");
    assert_eq!(
        refusal(
            &s,
            gateway(json!([{"name": "a", "port": 70000, "protocol": "HTTP"}])),
            None
        ),
        vec![
            "spec.listeners[0].port: Invalid value: 70000: spec.listeners[0].port in body should be less than or equal to 65535"
        ]
    );
    assert_eq!(
        refusal(
            &s,
            gateway(json!([{"name": "a", "protocol": "HTTP"}])),
            None
        ),
        vec!["spec.listeners[0].port: Required value"]
    );
    let dup = refusal(
        &s,
        gateway(
            json!([{"name": "a", "port": 80, "protocol": "HTTP"}, {"name": "a", "port": 81, "protocol": "HTTP"}]),
        ),
        None,
    );
    assert_eq!(
        dup[0],
        "spec.listeners[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}"
    );
    let mut empty_class = gateway(json!([{"name": "a", "port": 80, "protocol": "HTTP"}]));
    empty_class["spec"]["gatewayClassName"] = json!("");
    assert_eq!(
        refusal(&s, empty_class, None),
        vec![
            "spec.gatewayClassName: Invalid value: \"\": spec.gatewayClassName in body should be at least 1 chars long"
        ]
    );
    let mut unknown = gateway(json!([{"name": "a", "port": 80, "protocol": "HTTP", "bogus": 1}]));
    unknown["spec"]["nope"] = json!(true);
    assert_eq!(
        refusal(&s, unknown, None),
        vec![
            "strict decoding error: unknown field \"spec.listeners[0].bogus\", unknown field \"spec.nope\""
        ]
    );
}

/// Gateway API GatewayClass: `spec.controllerName` is immutable (transition rule
/// `self == oldSelf`): allowed on create, refused on a changing update.
#[test]
fn gatewayclass_transition_rule() {
    let s = compile("gateway.networking.k8s.io_gatewayclasses.yaml", "v1");
    let gc = |c: &str| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
        "metadata": {"name": "gc"}, "spec": {"controllerName": c}})
    };
    assert!(refusal(&s, gc("example.com/a"), None).is_empty());
    assert!(refusal(&s, gc("example.com/a"), Some(&gc("example.com/a"))).is_empty());
    assert_eq!(
        refusal(&s, gc("example.com/b"), Some(&gc("example.com/a"))),
        vec!["spec.controllerName: Invalid value: \"string\": field is immutable"]
    );
}

/// cert-manager Certificate: valid passes; missing required fields are refused.
#[test]
fn certificate() {
    let s = compile("cert-manager.io_certificates.yaml", "v1");
    let ok = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"},
        "spec": {"secretName": "s", "dnsNames": ["a.example.com"], "issuerRef": {"name": "i", "kind": "Issuer"}}});
    assert!(refusal(&s, ok, None).is_empty());
    let bad = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"},
        "spec": {"issuerRef": {"kind": "Issuer"}}});
    assert_eq!(
        refusal(&s, bad, None),
        vec![
            "spec.secretName: Required value",
            "spec.issuerRef.name: Required value"
        ]
    );
}

/// Prometheus ServiceMonitor: enum and pattern constraints of its endpoints.
#[test]
fn servicemonitor() {
    let s = compile("monitoring.coreos.com_servicemonitors.yaml", "v1");
    let sm = |ep: Value| {
        json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "m"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "endpoints": [ep]}})
    };
    assert!(
        refusal(
            &s,
            sm(json!({"port": "web", "interval": "30s", "scheme": "https"})),
            None
        )
        .is_empty()
    );
    let got = refusal(&s, sm(json!({"port": "web", "scheme": "ftp"})), None);
    assert_eq!(
        got[0],
        "spec.endpoints[0].scheme: Unsupported value: \"ftp\": supported values: \"http\", \"https\", \"HTTP\", \"HTTPS\""
    );
    let got = refusal(&s, sm(json!({"port": "web", "interval": "soon"})), None);
    assert!(got[0].starts_with("spec.endpoints[0].interval: Invalid value: \"soon\": spec.endpoints[0].interval in body should match '^(0|"), "{got:?}");
}

/// KEP-2885 / field_validation.go e2e for a CR: a raw body with an unknown and a
/// duplicated field, under Strict (refused, both named), Warn (stored without the unknown
/// field, one warning each) and Ignore (silent).
#[test]
fn field_validation_from_raw_body() {
    let s = compile("cert-manager.io_certificates.yaml", "v1");
    let body = br#"{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"},
        "spec": {"secretName": "a", "secretName": "b", "issuerRef": {"name": "i"}, "bogus": true}}"#;
    let run = |mode| {
        let (mut obj, dups) = super::parse_with_duplicates(body).expect("json");
        s.admit(&mut obj, None, &dups, mode, Scope::Main)
            .map(|a| (a.warnings, obj))
    };
    assert_eq!(
        run(FieldValidation::Strict).map(|r| r.0),
        Err(Refused::Strict(
            "strict decoding error: unknown field \"spec.bogus\", duplicate field \"spec.secretName\"".into()
        ))
    );
    let (warnings, stored) = run(FieldValidation::Warn).expect("admitted");
    assert_eq!(
        warnings,
        vec![
            "unknown field \"spec.bogus\"",
            "duplicate field \"spec.secretName\""
        ]
    );
    assert_eq!(stored["spec"]["secretName"], "b");
    assert!(stored["spec"].get("bogus").is_none());
    assert_eq!(
        run(FieldValidation::Ignore).expect("admitted").0,
        Vec::<String>::new()
    );
}

/// The read path of a real CRD with defaults deep in list items (ServiceMonitor): an object
/// admitted under the schema needs nothing on read (served without a copy); one stored
/// before a default applied gets it back.
#[test]
fn admitted_objects_need_no_read_back() {
    let s = compile("monitoring.coreos.com_servicemonitors.yaml", "v1");
    assert!(s.has_defaults());
    let mut sm = json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
        "metadata": {"name": "m", "namespace": "d", "uid": "u", "resourceVersion": "5"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "endpoints": [{"port": "web",
            "interval": "30s", "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_name"], "targetLabel": "pod"}],
            "basicAuth": {"username": {"key": "u"}, "password": {"key": "p"}}}]}});
    let raw = sm.clone();
    assert!(s.needs_read_back(&raw));
    s.admit(&mut sm, None, &[], FieldValidation::Strict, Scope::Main)
        .expect("valid");
    assert!(!s.needs_read_back(&sm), "{sm:#}");
    let mut back = raw;
    s.read_back(&mut back);
    assert_eq!(back, sm);
}
