//! Issue 41: `kubegen-codegen crd`, `update` and `verify` on the Rust types people write
//! (`testdata/idiomatic/apis`): meta types through a module alias
//! (`use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;`), a renamed
//! collection (`BTreeMap as Map`), type aliases (one generic), a re-export under another
//! name, and two recursive types, cut where they meet themselves with a node that keeps
//! unknown fields (`RouteSpec` after `+kubegen:maxDepth=2` levels, `MatchExpr` at once).
//!
//! The proof runs against the test server, which enforces kube-apiserver's structural
//! schema rules (`testserver/src/schema/structural.rs`) and `fieldValidation=Strict`
//! (`k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta`, pruning in
//! `.../schema/pruning`): objects serde writes from these very types are stored
//! unchanged, beyond the cut too, while a wrong type or an unknown field where the schema
//! still describes the type is refused.

#![allow(clippy::unwrap_used)]

mod common;

#[path = "../testdata/idiomatic/apis/routing/v1/mod.rs"]
#[allow(dead_code)]
mod routing;

use std::path::{Path, PathBuf};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kubegen_codegen::PluralExceptions;
use kubegen_codegen::crd::files;
use kubegen_testserver::{ClusterConfig, TestServer};
use serde_json::{Value, json};

use routing::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/idiomatic")
}

#[test]
fn crd_and_verify_handle_the_idiomatic_tree_and_warn_about_the_cuts() {
    let out = files::partial(&root().join("apis"), &PluralExceptions::default()).unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let names: Vec<&str> = out.crds.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["routing.kubegen.dev_routes.yaml"]);
    let warnings: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let types = root().join("apis/routing/v1/types.rs");
    let matching = root().join("apis/routing/v1/matching.rs");
    assert!(
        warnings.iter().any(|w| w.starts_with(&format!(
            "{}:30: `RouteSpec` contains itself (RouteSpec → RouteSpec → RouteSpec)",
            types.display()
        ))),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with(&format!(
            "{}:17: `MatchExpr` contains itself (MatchExpr → MatchExpr)",
            matching.display()
        ))),
        "{warnings:?}"
    );
    let outcome = files::verify(
        &root().join("apis"),
        &root().join("crds"),
        &PluralExceptions::default(),
    )
    .unwrap();
    assert!(outcome.is_up_to_date(), "{}", outcome.diff);
}

/// One generator, two entry points: `#[derive(kubegen::Schema)]` on the same types gives
/// the CLI's CRD (the derive resolves aliases through Rust: a module alias's k8s-openapi
/// type by its name, a type alias through `kubegen::crd::Schema` of its target).
#[test]
fn the_derive_gives_the_clis_crd() {
    let manifests = files::manifests(&root().join("apis"), &PluralExceptions::default()).unwrap();
    let cli = manifests[0].1.clone();
    let typed: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
        serde_json::from_value(cli.clone()).unwrap();
    assert_eq!(serde_json::to_value(Route::crd()).unwrap(), cli);
    assert_eq!(Route::crd(), typed);
}

/// `update` (the clientset, listers, informers, apply configurations) reads the same tree.
#[test]
fn update_generates_the_clients_of_the_idiomatic_tree() {
    // `update` writes the resource impls beside the types: into a copy.
    let tmp = tempfile::tempdir().unwrap();
    common::copy_tree(&root().join("apis"), &tmp.path().join("apis"));
    let config = kubegen_codegen::Config::new(
        tmp.path().join("apis"),
        tmp.path().join("client"),
        "crate::client",
    )
    .with_fake(true)
    .with_applyconfig(true);
    let generated = kubegen_codegen::Generator::new(config)
        .unwrap()
        .update()
        .unwrap();
    assert!(
        generated
            .iter()
            .any(|f| f.path.to_string_lossy().contains("route")),
        "{:?}",
        generated.iter().map(|f| &f.path).collect::<Vec<_>>()
    );
}

/// A route three fallbacks deep (one beyond the cut) with nested match expressions.
fn route(name: &str) -> Route {
    let leaf = RouteSpec {
        host: "c.example.com".into(),
        backends: vec![Backend {
            service: "c".into(),
            port: 8080,
        }],
        ..RouteSpec::default()
    };
    let middle = RouteSpec {
        host: "b.example.com".into(),
        fallback: Some(Box::new(leaf)),
        matcher: Some(RouteMatcher {
            expr: MatchExpr::Not(Box::new(MatchExpr::Prefix("/private".into()))),
            case_sensitive: false,
        }),
        ..RouteSpec::default()
    };
    Route {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: RouteSpec {
            host: "a.example.com".into(),
            labels: [("tier".to_owned(), "edge".to_owned())].into(),
            backends: vec![Backend {
                service: "a".into(),
                port: 80,
            }],
            matcher: Some(RouteMatcher {
                expr: MatchExpr::All(vec![
                    MatchExpr::Prefix("/api".into()),
                    MatchExpr::Header {
                        name: "x-team".into(),
                        value: "blue".into(),
                    },
                    MatchExpr::All(vec![MatchExpr::Not(Box::new(MatchExpr::Prefix(
                        "/api/internal".into(),
                    )))]),
                ]),
                case_sensitive: true,
            }),
            not_before: Some(Time("2026-11-29T12:00:00Z".parse().unwrap())),
            fallback: Some(Box::new(middle)),
        },
    }
}

/// (status, body) of a POST with `fieldValidation=Strict`, and of a GET.
async fn post(server: &TestServer, body: Value) -> (u16, Value) {
    send(
        server,
        "POST",
        "/apis/routing.kubegen.dev/v1/namespaces/default/routes?fieldValidation=Strict",
        Some(body),
    )
    .await
}

async fn send(server: &TestServer, method: &str, uri: &str, body: Option<Value>) -> (u16, Value) {
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
        .unwrap();
    let response = server.transport().serve(request).await;
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn as_object(route: &Route) -> Value {
    let mut v = serde_json::to_value(route).unwrap();
    v["apiVersion"] = json!("routing.kubegen.dev/v1");
    v["kind"] = json!("Route");
    v
}

#[tokio::test]
async fn objects_of_the_types_round_trip_and_wrong_shapes_are_refused() {
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .start()
        .await
        .unwrap();
    for (name, text) in files::generate(&root().join("apis"), &PluralExceptions::default()).unwrap()
    {
        server
            .load_crd_yaml(&text)
            .unwrap_or_else(|e| panic!("{name} rejected: {e}"));
    }

    let sent = route("edge");
    let (code, body) = post(&server, as_object(&sent)).await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = send(
        &server,
        "GET",
        "/apis/routing.kubegen.dev/v1/namespaces/default/routes/edge",
        None,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let mut got: Route = serde_json::from_value(body).unwrap();
    got.metadata = sent.metadata.clone();
    assert_eq!(got, sent, "stored unchanged, below the cuts too");

    // Where the schema describes the type, a wrong type and an unknown field are refused.
    let mut wrong = as_object(&route("wrong-port"));
    wrong["spec"]["backends"][0]["port"] = json!("eighty");
    let (code, body) = post(&server, wrong).await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("spec.backends[0].port"),
        "{body}"
    );
    let mut unknown = as_object(&route("unknown-field"));
    unknown["spec"]["fallback"]["bogus"] = json!(1);
    let (code, body) = post(&server, unknown).await;
    // kube-apiserver answers a strict decoding error with 400 BadRequest.
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown field \"spec.fallback.bogus\""),
        "{body}"
    );
    // A missing required field at the second level (still described) is refused.
    let mut missing = as_object(&route("no-host"));
    missing["spec"]["fallback"]
        .as_object_mut()
        .unwrap()
        .remove("host");
    let (code, body) = post(&server, missing).await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("spec.fallback.host"),
        "{body}"
    );
}

/// One kind's error no longer keeps the others from being written: `crd` writes the
/// CRDs it can, leaves the failed kind's file as it was and exits non-zero naming it.
#[test]
fn crd_writes_what_it_can_and_names_what_it_could_not() {
    let tmp = tempfile::tempdir().unwrap();
    let apis = tmp.path().join("apis");
    common::copy_tree(&root().join("apis"), &apis);
    let broken = apis.join("things/v1");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("mod.rs"),
        "//! +groupName=things.example.com\n\n/// +genclient\npub struct Thing {\n    pub metadata: ObjectMeta,\n    pub spec: ThingSpec,\n}\n\npub struct ThingSpec {\n    pub when: std::time::Instant,\n}\n",
    )
    .unwrap();
    let out = tmp.path().join("crds");
    std::fs::create_dir_all(&out).unwrap();
    // The broken kind's CRD from before stays as it was.
    let old = out.join("things.example.com_things.yaml");
    std::fs::write(&old, "# the CRD from before\n").unwrap();

    let run = std::process::Command::new(env!("CARGO_BIN_EXE_kubegen-codegen"))
        .args(["crd", "--input-dir"])
        .arg(&apis)
        .arg("--output-dir")
        .arg(&out)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:10: no schema for `std::time::Instant`",
            broken.join("mod.rs").display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "not written: things.example.com_things.yaml (fix the errors above); 1 CRD(s) written"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("`MatchExpr` contains itself"), "{stderr}");
    assert!(out.join("routing.kubegen.dev_routes.yaml").is_file());
    assert_eq!(
        std::fs::read_to_string(&old).unwrap(),
        "# the CRD from before\n"
    );
}
