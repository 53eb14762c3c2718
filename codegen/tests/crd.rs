//! `kubegen-codegen crd`: the committed CRDs of `testdata/crd/apis` are what the
//! generator writes, the test server (which enforces kube-apiserver's structural-schema
//! rules, `testserver/src/schema/structural.rs`) accepts every one of them, and objects
//! serde writes from the very types the CRDs were generated from round-trip through the
//! server unpruned, while the markers' constraints reject what they should.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

#[path = "../testdata/crd/apis/shapes/v1/mod.rs"]
#[allow(dead_code)]
mod shapes;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube_core::discovery::ApiResource;
use kube_core::gvk::GroupVersionKind;
use kube_core::{DynamicObject, params::GetParams};
use kubegen::client::DynamicClient;
use kubegen::client::params::PostParams;
use kubegen_codegen::PluralExceptions;
use kubegen_codegen::crd::files;
use kubegen_testserver::TestServer;
use serde::Serialize;
use serde::de::DeserializeOwned;

use shapes::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/crd")
}

#[test]
fn committed_crds_match_fresh_generation() {
    let outcome = files::verify(
        &root().join("apis"),
        &root().join("crds"),
        &PluralExceptions::default(),
    )
    .unwrap();
    assert!(outcome.is_up_to_date(), "{}", outcome.diff);
    let names: Vec<String> = files::generate(&root().join("apis"), &PluralExceptions::default())
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "shapes.kubegen.dev_dials.yaml",
            "shapes.kubegen.dev_gauges.yaml",
            "shapes.kubegen.dev_meters.yaml",
            "shapes.kubegen.dev_rollouts.yaml",
            "shapes.kubegen.dev_shapes.yaml"
        ]
    );
}

/// One generator: `#[derive(kubegen::Schema)]`'s `crd()` (the type alone, with holes
/// filled at run time from the other types' derived schemas) is the CLI's file.
#[test]
fn derive_crd_matches_the_cli() {
    let manifests = files::manifests(&root().join("apis"), &PluralExceptions::default()).unwrap();
    let cli = |name: &str| {
        manifests
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    // As k8s-openapi's type (which reads `minimum: 1` as the float it is in
    // JSONSchemaProps), and as JSON where no number is involved.
    let typed =
        |v: serde_json::Value| -> CustomResourceDefinition { serde_json::from_value(v).unwrap() };
    assert_eq!(Shape::crd(), typed(cli("shapes.kubegen.dev_shapes.yaml")));
    assert_eq!(
        serde_json::to_value(Shape::crd()).unwrap(),
        cli("shapes.kubegen.dev_shapes.yaml")
    );
    assert_eq!(Gauge::crd(), typed(cli("shapes.kubegen.dev_gauges.yaml")));
    assert_eq!(Dial::crd(), typed(cli("shapes.kubegen.dev_dials.yaml")));
    assert_eq!(
        serde_json::to_value(Rollout::crd()).unwrap(),
        cli("shapes.kubegen.dev_rollouts.yaml")
    );
}

#[test]
fn verify_reports_stale_missing_and_extra_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    files::update(&root().join("apis"), out, &PluralExceptions::default()).unwrap();
    let check = || files::verify(&root().join("apis"), out, &PluralExceptions::default()).unwrap();
    assert!(check().is_up_to_date());
    std::fs::write(out.join("extra_things.yaml"), "x").unwrap();
    let gauges = out.join("shapes.kubegen.dev_gauges.yaml");
    let text = std::fs::read_to_string(&gauges).unwrap();
    std::fs::write(&gauges, text.replace("maximum: 10", "maximum: 11")).unwrap();
    std::fs::remove_file(out.join("shapes.kubegen.dev_shapes.yaml")).unwrap();
    let outcome = check();
    assert_eq!(outcome.differing.len(), 3, "{}", outcome.diff);
    assert!(outcome.diff.contains("/dev/null"), "{}", outcome.diff);
    assert!(
        outcome
            .diff
            .contains("-                maximum: 11\n+                maximum: 10")
    );
    // update makes it current again, removing the extra file.
    files::update(&root().join("apis"), out, &PluralExceptions::default()).unwrap();
    assert!(check().is_up_to_date());
    assert!(!out.join("extra_things.yaml").exists());
}

/// A test server with the generated CRDs installed.
async fn server() -> (TestServer, kubegen::client::Client) {
    let server = TestServer::start().await.unwrap();
    for (name, text) in files::generate(&root().join("apis"), &PluralExceptions::default()).unwrap()
    {
        server
            .load_crd_yaml(&text)
            .unwrap_or_else(|e| panic!("{name} rejected: {e}"));
    }
    let client = server.client().unwrap();
    (server, client)
}

fn dynamic(
    client: &kubegen::client::Client,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> DynamicClient {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("shapes.kubegen.dev", "v1", kind),
        plural,
    );
    match ns {
        Some(ns) => DynamicClient::namespaced(client.clone(), &ar, ns),
        None => DynamicClient::all(client.clone(), &ar),
    }
}

fn object<T: Serialize>(kind: &str, value: &T) -> DynamicObject {
    let mut v = serde_json::to_value(value).unwrap();
    v["apiVersion"] = "shapes.kubegen.dev/v1".into();
    v["kind"] = kind.into();
    serde_json::from_value(v).unwrap()
}

fn back<T: DeserializeOwned>(obj: &DynamicObject) -> T {
    serde_json::from_value(serde_json::to_value(obj).unwrap()).unwrap()
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

/// Strips what the server adds (uid, resourceVersion, timestamps ...) from metadata.
fn same_user_fields<T: Clone>(
    mut got: T,
    meta_of: impl Fn(&mut T) -> &mut ObjectMeta,
    name: &str,
) -> T {
    *meta_of(&mut got) = meta(name);
    got
}

fn full_spec(i: usize) -> ShapeSpec {
    let sources = [
        Source::Git {
            url: "https://example.com/r.git".into(),
            branch: Some("main".into()),
        },
        Source::Http("https://example.com/x".into()),
    ];
    let backends = [
        Backend::Service {
            name: "svc".into(),
            port: 80,
        },
        Backend::Bucket {
            bucket: "b".into(),
            region: "eu".into(),
        },
        Backend::None,
    ];
    let actions = [
        Action::ScaleTo { replicas: 3 },
        Action::Restart { delay_seconds: 10 },
        Action::Noop,
    ];
    let ports = [PortRef::Number(8080), PortRef::Name("http".into())];
    let targets = [
        Target::Named { name: "n".into() },
        Target::Labeled {
            labels: BTreeMap::from([("app".into(), "x".into())]),
            limit: Some(2),
        },
    ];
    let colors = [Color::Red, Color::DarkGreen];
    ShapeSpec {
        display_name: format!("shape {i}"),
        size: 1 << 40,
        small: Some(-3),
        ratio: 0.5,
        weight: 1.5,
        enabled: true,
        cache: Vec::new(),
        tags: vec!["a".into(), "b".into()],
        labels: BTreeMap::from([("k".into(), "v".into())]),
        ports: HashMap::from([("web".into(), vec![80, 443])]),
        raw: Some(serde_json::json!({"any": ["thing", 1, {"deep": null}]})),
        color: colors[i % colors.len()].clone(),
        source: Some(sources[i % sources.len()].clone()),
        backend: Some(backends[i % backends.len()].clone()),
        action: Some(actions[i % actions.len()].clone()),
        port: Some(ports[i % ports.len()].clone()),
        target: Some(targets[i % targets.len()].clone()),
        common: Common {
            owner_team: "team".into(),
            priority: Some(7),
        },
        template: Some(PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(BTreeMap::from([("app".into(), "x".into())])),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "c".into(),
                    image: Some("nginx".into()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
        }),
        resources: None,
        memory: Some(Quantity("512Mi".into())),
        max_unavailable: Some(if i.is_multiple_of(2) {
            IntOrString::Int(1)
        } else {
            IntOrString::String("25%".into())
        }),
        not_before: Some(Time(jiff::Timestamp::from_second(1_700_000_000).unwrap())),
        selector: None,
    }
}

#[tokio::test]
async fn every_serde_shape_round_trips_unpruned_through_the_generated_schema() {
    let (_server, client) = server().await;
    let shapes = dynamic(&client, "Shape", "shapes", Some("default"));
    let pp = PostParams::default();
    // Six objects cover every variant of every enum.
    for i in 0..6 {
        let name = format!("shape-{i}");
        let shape = Shape {
            metadata: meta(&name),
            spec: full_spec(i),
            status: None,
        };
        shapes.create(&pp, &object("Shape", &shape)).await.unwrap();
        let got: Shape = back(&shapes.get(&name, &GetParams::default()).await.unwrap());
        let got = same_user_fields(got, |s| &mut s.metadata, &name);
        assert_eq!(
            got, shape,
            "object {i} changed on its way through the server"
        );
    }
}

#[tokio::test]
async fn required_fields_and_enum_values_are_enforced() {
    let (_server, client) = server().await;
    let shapes = dynamic(&client, "Shape", "shapes", Some("default"));
    let pp = PostParams::default();
    let mut obj = serde_json::to_value(Shape {
        metadata: meta("bad"),
        spec: full_spec(0),
        status: None,
    })
    .unwrap();
    obj["apiVersion"] = "shapes.kubegen.dev/v1".into();
    obj["kind"] = "Shape".into();
    let spec = obj["spec"].as_object_mut().unwrap();
    spec.remove("displayName");
    spec.insert("color".into(), "blue".into());
    spec.insert("backend".into(), serde_json::json!({"kind": "Tape"}));
    let err = shapes
        .create(&pp, &serde_json::from_value(obj).unwrap())
        .await
        .unwrap_err()
        .to_string();
    for want in ["spec.displayName", "spec.color", "spec.backend.kind"] {
        assert!(err.contains(want), "{want} not in {err}");
    }
}

fn gauge(name: &str) -> Gauge {
    Gauge {
        metadata: meta(name),
        spec: GaugeSpec {
            level: 5,
            fraction: 0.5,
            unit: "kg".into(),
            mode: Some("Fast".into()),
            contact: Some("a@example.com".into()),
            readings: vec![1, 2],
            owner: "me".into(),
            note: String::new(),
            retries: Some(1),
            limits: BTreeMap::from([("cpu".into(), Quantity("1".into()))]),
            window: Some(Window { start: 1, end: 2 }),
        },
    }
}

#[tokio::test]
async fn validation_markers_accept_valid_and_reject_invalid_objects() {
    let (_server, client) = server().await;
    let gauges = dynamic(&client, "Gauge", "gauges", None);
    let pp = PostParams::default();
    let ok = gauge("g-ok");
    let got: Gauge = back(&gauges.create(&pp, &object("Gauge", &ok)).await.unwrap());
    assert_eq!(same_user_fields(got, |g| &mut g.metadata, "g-ok"), ok);

    // +kubebuilder:default fills what serde omitted.
    let mut defaulted = gauge("g-default");
    defaulted.spec.mode = None;
    defaulted.spec.retries = None;
    let got: Gauge = back(
        &gauges
            .create(&pp, &object("Gauge", &defaulted))
            .await
            .unwrap(),
    );
    assert_eq!(got.spec.mode.as_deref(), Some("Slow"));
    assert_eq!(got.spec.retries, Some(3));

    type Change = Box<dyn Fn(&mut Gauge)>;
    let cases: Vec<(&str, Change, &str)> = vec![
        ("g-max", Box::new(|g| g.spec.level = 11), "spec.level"),
        ("g-min", Box::new(|g| g.spec.level = 0), "spec.level"),
        (
            "g-exclusive",
            Box::new(|g| g.spec.fraction = 1.0),
            "spec.fraction",
        ),
        (
            "g-multiple",
            Box::new(|g| g.spec.fraction = 0.3),
            "spec.fraction",
        ),
        (
            "g-pattern",
            Box::new(|g| g.spec.unit = "KG".into()),
            "spec.unit",
        ),
        (
            "g-maxlength",
            Box::new(|g| g.spec.unit = "abcdefghi".into()),
            "spec.unit",
        ),
        (
            "g-minlength",
            Box::new(|g| g.spec.unit = String::new()),
            "spec.unit",
        ),
        (
            "g-enum",
            Box::new(|g| g.spec.mode = Some("Medium".into())),
            "spec.mode",
        ),
        (
            "g-minitems",
            Box::new(|g| g.spec.readings.clear()),
            "spec.readings",
        ),
        (
            "g-maxitems",
            Box::new(|g| g.spec.readings = vec![1, 2, 3, 4]),
            "spec.readings",
        ),
        (
            "g-unique",
            Box::new(|g| g.spec.readings = vec![1, 1]),
            "spec.readings",
        ),
        (
            "g-minprops",
            Box::new(|g| g.spec.limits.clear()),
            "spec.limits",
        ),
        (
            "g-cel-type",
            Box::new(|g| g.spec.window = Some(Window { start: 5, end: 1 })),
            "start after end",
        ),
        ("bad-name", Box::new(|_| {}), "names start with g"),
    ];
    for (name, change, want) in cases {
        let mut g = gauge(name);
        change(&mut g);
        let err = gauges
            .create(&pp, &object("Gauge", &g))
            .await
            .expect_err(name)
            .to_string();
        assert!(err.contains(want), "{name}: `{want}` not in {err}");
    }
    // +kubebuilder:validation:Required: `owner` must be sent even though serde defaults it.
    let mut v = serde_json::to_value(gauge("g-owner")).unwrap();
    v["spec"].as_object_mut().unwrap().remove("owner");
    v["apiVersion"] = "shapes.kubegen.dev/v1".into();
    v["kind"] = "Gauge".into();
    let err = gauges
        .create(&pp, &serde_json::from_value(v).unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("spec.owner"), "{err}");
}

#[tokio::test]
async fn status_conditions_are_a_map_list_of_kubernetes_conditions() {
    let (_server, client) = server().await;
    let shapes = dynamic(&client, "Shape", "shapes", Some("default"));
    let pp = PostParams::default();
    let mut shape = Shape {
        metadata: meta("with-status"),
        spec: full_spec(1),
        status: None,
    };
    shapes.create(&pp, &object("Shape", &shape)).await.unwrap();
    let condition = |t: &str| Condition {
        type_: t.into(),
        status: "True".into(),
        reason: "Done".into(),
        message: String::new(),
        last_transition_time: Time(jiff::Timestamp::from_second(1_700_000_000).unwrap()),
        observed_generation: Some(1),
    };
    shape.status = Some(ShapeStatus {
        conditions: vec![condition("Ready"), condition("Ready")],
        observed_generation: 1,
    });
    // listType=map with key `type`: duplicate keys are rejected on the status subresource.
    let mut obj = object("Shape", &shape);
    let current = shapes
        .get("with-status", &GetParams::default())
        .await
        .unwrap();
    obj.metadata = current.metadata.clone();
    let err = shapes
        .update_status(&pp, &obj)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("status.conditions"), "{err}");
    shape.status = Some(ShapeStatus {
        conditions: vec![condition("Ready")],
        observed_generation: 1,
    });
    let mut obj = object("Shape", &shape);
    obj.metadata = current.metadata;
    let got: Shape = back(&shapes.update_status(&pp, &obj).await.unwrap());
    assert_eq!(got.status, shape.status);
}

/// Malformed markers and unrepresentable types are `file:line: message` errors, every
/// one of them at once.
#[test]
fn cli_errors_name_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("apis/things/v1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mod.rs"),
        "//! +groupName=things.example.com\n\nmod types;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("types.rs"),
        r#"/// +genclient
pub struct Thing {
    pub metadata: ObjectMeta,
    pub spec: ThingSpec,
}

pub struct ThingSpec {
    /// +kubebuilder:validation:Maximum=lots
    pub level: i32,
    /// +kubebuilder:validation:Pattern=^a$
    pub count: u64,
    pub when: std::time::Instant,
    /// +mapType=bogus
    pub m: BTreeMap<String, String>,
}
"#,
    )
    .unwrap();
    let err = files::generate(&tmp.path().join("apis"), &PluralExceptions::default())
        .unwrap_err()
        .to_string();
    let types = dir.join("types.rs");
    let want = [
        format!(
            "{}:8: `+kubebuilder:validation:Maximum` expects a number, found `lots`",
            types.display()
        ),
        format!(
            "{}:10: `+kubebuilder:validation:Pattern` applies to string schemas, not to `integer`",
            types.display()
        ),
        format!("{}:12: no schema for `std::time::Instant`", types.display()),
        format!(
            "{}:13: `+mapType=bogus`: expected `atomic` or `granular`",
            types.display()
        ),
    ];
    for w in want {
        assert!(err.contains(&w), "`{w}` not in:\n{err}");
    }
}

/// `EmbeddedResource` + `PreserveUnknownFields` keep a whole object; `XIntOrString`
/// takes a number or a string; an embedded object without `kind` is refused, as
/// kube-apiserver validates `x-kubernetes-embedded-resource` nodes.
#[tokio::test]
async fn structural_markers_keep_what_they_promise() {
    let (_server, client) = server().await;
    let dials = dynamic(&client, "Dial", "dials", Some("default"));
    let pp = PostParams::default();
    for (i, surge) in [serde_json::json!(2), serde_json::json!("25%")]
        .into_iter()
        .enumerate()
    {
        let name = format!("dial-{i}");
        let dial = Dial {
            metadata: meta(&name),
            spec: DialSpec {
                replicas: 2,
                color: "red".into(),
                settings: BTreeMap::from([("a".into(), "b".into())]),
                surge: Some(surge),
                object: Some(serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "cm"},
                    "data": {"k": "v"},
                    "anything": {"nested": [1, 2]},
                })),
                extra: BTreeMap::from([("x".into(), "y".into())]),
                blob: Some(Opaque(BTreeMap::from([(
                    "any".into(),
                    serde_json::json!({"deep": [1, {"x": true}]}),
                )]))),
            },
            status: None,
        };
        let got: Dial = back(&dials.create(&pp, &object("Dial", &dial)).await.unwrap());
        assert_eq!(same_user_fields(got, |d| &mut d.metadata, &name), dial);
    }
    let mut v = serde_json::to_value(Dial {
        metadata: meta("dial-bad"),
        spec: DialSpec {
            object: Some(serde_json::json!({"apiVersion": "v1", "metadata": {"name": "x"}})),
            ..DialSpec::default()
        },
        status: None,
    })
    .unwrap();
    v["apiVersion"] = "shapes.kubegen.dev/v1".into();
    v["kind"] = "Dial".into();
    let err = dials
        .create(&pp, &serde_json::from_value(v).unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("spec.object.kind"), "{err}");
}

/// Versions of one kind merge into one CRD (controller-gen's rule: with several
/// versions, exactly one is `+kubebuilder:storageversion`); the server serves all.
#[tokio::test]
async fn versions_of_a_kind_merge_into_one_crd() {
    let manifests = files::manifests(&root().join("apis"), &PluralExceptions::default()).unwrap();
    let (_, meters) = manifests
        .iter()
        .find(|(n, _)| n == "shapes.kubegen.dev_meters.yaml")
        .unwrap();
    // (name, storage, served)
    let versions: Vec<(&str, bool, bool)> = meters["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap(),
                v["storage"].as_bool().unwrap(),
                v["served"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        versions,
        [
            ("v1", true, true),
            ("v1alpha1", false, false),
            ("v1beta1", false, true),
            ("v2", false, true)
        ]
    );
    // `+kubebuilder:deprecatedversion:warning=...` (controller-gen's `Deprecated` marker,
    // `pkg/crd/markers/crd.go`) sets `deprecated` and `deprecationWarning`.
    let v1beta1 = &meters["spec"]["versions"][2];
    assert_eq!(v1beta1["deprecated"], true);
    assert_eq!(
        v1beta1["deprecationWarning"],
        "shapes.kubegen.dev/v1beta1 Meter is deprecated; use shapes.kubegen.dev/v1"
    );
    let (_server, client) = server().await;
    for version in ["v1", "v1alpha1", "v1beta1", "v2"] {
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("shapes.kubegen.dev", version, "Meter"),
            "meters",
        );
        let list = DynamicClient::namespaced(client.clone(), &ar, "default")
            .list(&Default::default())
            .await;
        // An unserved version (`+kubebuilder:unservedversion`) is not served: 404.
        if version == "v1alpha1" {
            assert!(
                list.as_ref().is_err_and(|e| e.is_not_found()),
                "{version}: {list:?}"
            );
        } else {
            assert!(list.is_ok(), "{version}: {list:?}");
        }
    }

    // Without a storage version marker, two versions are an error naming the kind.
    let tmp = tempfile::tempdir().unwrap();
    for v in ["v1", "v2"] {
        let dir = tmp.path().join("apis/things").join(v);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("mod.rs"),
            "//! +groupName=things.example.com\n\n/// +genclient\npub struct Thing {\n    pub metadata: ObjectMeta,\n}\n",
        )
        .unwrap();
    }
    let err = files::generate(&tmp.path().join("apis"), &PluralExceptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mod.rs:4: things.example.com_things.yaml: 2 versions, 0 marked `+kubebuilder:storageversion`"),
        "{err}"
    );
}

/// Creates a Rollout with `fieldValidation=Strict` (an unknown or duplicate field is an
/// error, not a warning, so nothing is dropped silently).
async fn create_strict(
    client: &kubegen::client::Client,
    obj: &serde_json::Value,
) -> Result<serde_json::Value, kubegen::client::Error> {
    let request = http::Request::post(
        "/apis/shapes.kubegen.dev/v1/namespaces/default/rollouts?fieldValidation=Strict",
    )
    .header("content-type", "application/json")
    .body(serde_json::to_vec(obj).unwrap())
    .unwrap();
    client.request(request).await
}

/// Values of every `Rollout` field's type, as proptest draws them.
fn rollout_spec() -> impl proptest::strategy::Strategy<Value = RolloutSpec> {
    use proptest::collection::{btree_map, vec};
    use proptest::option::of;
    use proptest::prelude::*;
    let strategy = prop_oneof![
        Just(RolloutStrategy::Recreate),
        of(any::<i32>()).prop_map(|max_surge| RolloutStrategy::RollingUpdate { max_surge }),
        (vec(any::<i32>(), 0..3), any::<bool>())
            .prop_map(|(steps, pause)| RolloutStrategy::Canary(CanaryStrategy { steps, pause })),
        ("[a-z]{0,8}", of(any::<i64>())).prop_map(|(s, d)| RolloutStrategy::BlueGreen(s, d)),
    ];
    let weight = prop_oneof![
        any::<i32>().prop_map(Weight::Fixed),
        (any::<i32>(), any::<i32>()).prop_map(|(a, b)| Weight::Range(a, b)),
        ("[a-z]{0,8}", any::<i64>()).prop_map(|(s, n)| Weight::Split(s, n)),
    ];
    let step = prop_oneof![
        any::<i32>().prop_map(|weight| Step::SetWeight { weight }),
        of("[0-9]{1,3}s").prop_map(|duration| Step::Pause { duration }),
        ("[a-z]{1,8}", vec("[a-z]{0,4}", 0..3))
            .prop_map(|(template, args)| Step::Analyze { template, args }),
        Just(Step::Promote),
    ];
    let hook = prop_oneof![
        ("https://[a-z]{1,8}", any::<i32>())
            .prop_map(|(url, retries)| Hook::CallUrl { url, retries }),
        "[a-z]{1,8}".prop_map(|image| Hook::Job { image }),
        Just(Hook::Skip),
    ];
    let selector = prop_oneof![
        "[a-z]{0,8}".prop_map(|name| Selector::ByName { name }),
        btree_map("[a-z]{1,5}", "[a-z]{0,5}", 0..3)
            .prop_map(|match_labels| Selector::ByLabels { match_labels }),
    ];
    let payload = prop_oneof![
        "[a-z]{0,8}".prop_map(Payload::Text),
        "[a-z]{0,8}".prop_map(|data| Payload::Inline { data }),
    ];
    (
        (strategy, of(payload)),
        of(("[a-z]{0,8}", any::<i64>())),
        of((any::<i32>(), any::<i32>())),
        of(("[a-z]{0,8}", of(any::<i64>()))),
        of(weight),
        vec(step, 0..4),
        of(hook),
        of(selector),
        "[a-z]{0,8}",
    )
        .prop_map(
            |((strategy, payload), pair, range, delay, weight, steps, hook, selector, owner)| {
                RolloutSpec {
                    strategy,
                    payload,
                    pair,
                    range,
                    delay,
                    weight,
                    steps,
                    hook,
                    selector,
                    owner: Owner { name: owner },
                }
            },
        )
}

/// Issue 41: every serde enum representation and tuples. Whatever the Rust types
/// serialize (32 values drawn by proptest, deterministically) is accepted with strict
/// field validation and stored unchanged (nothing pruned), and the wrong shapes are refused with the schema's or the
/// generated CEL rule's message.
#[tokio::test]
async fn every_enum_representation_and_tuple_accepts_exactly_what_serde_writes() {
    use proptest::strategy::{Strategy, ValueTree};
    let (_server, client) = server().await;
    let rollouts = dynamic(&client, "Rollout", "rollouts", Some("default"));
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for i in 0..32 {
        let spec = rollout_spec().new_tree(&mut runner).unwrap().current();
        let name = format!("rollout-{i}");
        let rollout = Rollout {
            metadata: meta(&name),
            spec,
        };
        let obj = serde_json::to_value(object("Rollout", &rollout)).unwrap();
        create_strict(&client, &obj)
            .await
            .unwrap_or_else(|e| panic!("{rollout:?} refused: {e}"));
        let got: Rollout = back(&rollouts.get(&name, &GetParams::default()).await.unwrap());
        let got = same_user_fields(got, |r| &mut r.metadata, &name);
        assert_eq!(got, rollout, "{name} changed on its way through the server");
    }

    let base = serde_json::to_value(Rollout {
        metadata: meta("bad"),
        spec: RolloutSpec::default(),
    })
    .unwrap();
    let post = |field: &'static str, value: serde_json::Value| {
        let client = &client;
        let mut obj = base.clone();
        obj["apiVersion"] = "shapes.kubegen.dev/v1".into();
        obj["kind"] = "Rollout".into();
        obj["spec"][field] = value;
        async move { create_strict(client, &obj).await.map(|_| ()) }
    };
    let refused = [
        // A tuple of the wrong length, of a wrong element type.
        ("pair", serde_json::json!(["a", 1, 2]), "spec.pair"),
        ("range", serde_json::json!([1]), "spec.range"),
        ("pair", serde_json::json!(["a", true]), "spec.pair[1]"),
        (
            "pair",
            serde_json::json!(["a", "b"]),
            "must be an array of a string, an integer",
        ),
        (
            "pair",
            serde_json::json!([1, 2]),
            "must be an array of a string, an integer",
        ),
        (
            "delay",
            serde_json::json!([null, null]),
            "must be an array of a string, an integer or null",
        ),
        (
            "delay",
            serde_json::json!(["a", "b"]),
            "must be an array of a string, an integer or null",
        ),
        // Externally tagged: two keys, none, a wrong payload, an unknown variant.
        (
            "weight",
            serde_json::json!({"fixed": 1, "range": [1, 2]}),
            "spec.weight",
        ),
        ("weight", serde_json::json!({}), "spec.weight"),
        (
            "weight",
            serde_json::json!({"range": ["a", 1]}),
            "spec.weight.range[0]",
        ),
        (
            "weight",
            serde_json::json!({"split": ["a", 1, 2]}),
            "spec.weight.split",
        ),
        // Internally tagged: an unknown tag, a variant without its own required field.
        (
            "steps",
            serde_json::json!([{"action": "jump"}]),
            "spec.steps[0].action",
        ),
        (
            "steps",
            serde_json::json!([{"action": "setWeight"}]),
            "action \\\"setWeight\\\" requires weight",
        ),
        (
            "steps",
            serde_json::json!([{"action": "analyze", "weight": 3}]),
            "action \\\"analyze\\\" requires template",
        ),
        // Adjacently tagged: no content, content of another variant.
        (
            "hook",
            serde_json::json!({"kind": "job"}),
            "kind \\\"job\\\" requires with, with.image",
        ),
        (
            "hook",
            serde_json::json!({"kind": "call-url", "with": {"image": "x"}}),
            "kind \\\"call-url\\\" requires with, with.url",
        ),
        // Untagged: no variant's fields.
        (
            "selector",
            serde_json::json!({}),
            "must have the required fields of one of ByName (name), ByLabels (matchLabels)",
        ),
    ];
    for (field, value, want) in refused {
        let err = post(field, value.clone())
            .await
            .expect_err(&format!("{field}: {value} accepted"));
        let err = format!("{err:?}");
        assert!(err.contains("code: 422"), "{field}: {value}: {err}");
        assert!(err.contains(want), "{field}: {value}: {want} not in {err}");
    }
    // Unit and data variants mixed have no schema kube-apiserver can check (an untyped
    // node, which no CEL rule may see): any value is kept as sent.
    post(
        "strategy",
        serde_json::json!({"rollingUpdate": {}, "canary": {}}),
    )
    .await
    .unwrap();
}
