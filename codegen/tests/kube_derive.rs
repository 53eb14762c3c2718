//! Side by side with kube-rs's `#[derive(CustomResource)]` (kube-derive 5, schemas from
//! schemars): the same Rust spec types through both derives, each CRD created on the test
//! server, which enforces kube-apiserver's structural-schema rules
//! (`k8s.io/apiextensions-apiserver/pkg/apiserver/schema/validation.go`,
//! "Specifying a structural schema" in the CRD docs). Where kube-derive's schema is
//! rejected, ours is accepted; there is no type for which it is the other way round, and
//! every object serde writes from the shared types round-trips through ours unpruned.
//!
//! Measured with kube-derive 5.0.0: of nine common serde shapes, kube-derive's CRD is
//! refused by kube-apiserver's validation for three (an untagged number-or-string enum and
//! a `serde_json::Value` field leave an untyped node; a flattened map puts
//! `additionalProperties` beside `properties`), and `crd()` panics for two (internally and
//! adjacently tagged enums with struct variants: kube-core's `schema.rs` refuses the
//! differing tag enums of the variants). Ours is accepted for all nine.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::CustomResourceExt;
use kube_core::DynamicObject;
use kube_core::discovery::ApiResource;
use kube_core::gvk::GroupVersionKind;
use kubegen::client::params::PostParams;
use kubegen::client::{DynamicClient, ResourceClient};
use kubegen_testserver::TestServer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One case: a spec type derived both ways. `$kube` is kube-derive's generated kind,
/// `$ours` our wrapper of the same spec.
macro_rules! case {
    ($kind:literal, $plural:literal, $kube:ident, $ours:ident, $spec:ident { $($body:tt)* }) => {
        #[derive(kube_derive::CustomResource, kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(group = "side.kubegen.dev", version = "v1", kind = $kind, plural = $plural, namespaced)]
        #[kube(crates(kube_core = "::kube_core", k8s_openapi = "::k8s_openapi", schemars = "::schemars", serde = "::serde", serde_json = "::serde_json"))]
        #[allow(missing_docs)]
        pub struct $spec { $($body)* }

        /// Our resource of the same spec.
        #[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize)]
        #[resource(group = "side.kubegen.dev", version = "v1", kind = $kind, plural = $plural)]
        pub struct $ours {
            #[serde(default)]
            metadata: ObjectMeta,
            spec: $spec,
        }
    };
}

/// An amount written as a number or as text.
#[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Amount {
    /// A count.
    Int(i64),
    /// A quantity like `10Gi`.
    Text(String),
}

/// Where the payload comes from: serde tries each shape in turn.
#[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Source {
    /// A git repository.
    Git {
        /// Clone URL.
        url: String,
        /// Branch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
    },
    /// An image.
    Image {
        /// Reference.
        image: String,
    },
}

/// An action, externally tagged (`{"log": {...}}`).
#[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Log at a level.
    Log {
        /// Level.
        level: i32,
    },
    /// Forward somewhere.
    Forward {
        /// Target.
        to: String,
    },
}

/// A storage backend, internally tagged (`{"type": "S3", ...}`).
#[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum Backend {
    /// Amazon S3.
    S3 {
        /// Bucket.
        bucket: String,
    },
    /// Google Cloud Storage.
    Gcs {
        /// Bucket.
        bucket: String,
        /// Project.
        project: String,
    },
}

/// A probe, adjacently tagged (`{"kind": "Http", "spec": {...}}`).
#[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", content = "spec")]
pub enum Probe {
    /// HTTP GET.
    Http {
        /// Path.
        path: String,
    },
    /// TCP connect.
    Tcp {
        /// Port.
        port: i32,
    },
}

/// Fields shared by several specs, flattened in.
#[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Common {
    /// Owner team.
    pub team: String,
}

/// A unit-only enum.
#[derive(kubegen::Schema, Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub enum Mode {
    /// Fast.
    Fast,
    /// Slow.
    Slow,
}

case!("Amounted", "amounteds", Amounted, OurAmounted, AmountedSpec {
    /// Untagged number-or-string.
    pub amount: Amount,
});
case!("Sourced", "sourceds", Sourced, OurSourced, SourcedSpec {
    /// Untagged struct variants.
    pub source: Source,
});
case!("Acting", "actings", Acting, OurActing, ActingSpec {
    /// Externally tagged struct variants.
    pub action: Action,
});
case!("Stored", "storeds", Stored, OurStored, StoredSpec {
    /// Internally tagged.
    pub backend: Backend,
});
case!("Probed", "probeds", Probed, OurProbed, ProbedSpec {
    /// Adjacently tagged.
    pub probe: Probe,
});
case!("Configured", "configureds", Configured, OurConfigured, ConfiguredSpec {
    /// Any JSON.
    pub config: serde_json::Value,
});
case!("Flattened", "flatteneds", Flattened, OurFlattened, FlattenedSpec {
    /// Own field.
    pub name: String,
    /// Flattened struct.
    #[serde(flatten)]
    pub common: Common,
});
case!("Extended", "extendeds", Extended, OurExtended, ExtendedSpec {
    /// Own field.
    pub name: String,
    /// Every other key.
    #[serde(flatten)]
    pub extra: BTreeMap<String, String>,
});
case!("Moded", "modeds", Moded, OurModed, ModedSpec {
    /// An optional unit enum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
});

/// Creates `crd` on a fresh server through the API (kube-apiserver's CRD validation);
/// the status message when refused.
async fn create(crd: CustomResourceDefinition) -> Result<(), String> {
    let server = TestServer::start().await.unwrap();
    let crds: ResourceClient<CustomResourceDefinition> =
        ResourceClient::cluster(server.client().unwrap());
    crds.create(&PostParams::default(), &crd)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// kube-derive's CRD, or its panic message (kube-core's structural rewrite panics on
/// some serde shapes instead of returning an error).
fn kube_crd(f: fn() -> CustomResourceDefinition) -> Result<CustomResourceDefinition, String> {
    std::panic::catch_unwind(f).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default()
    })
}

/// What kube-derive 5.0 does with a case (measured; see the module docs).
#[derive(Debug)]
enum Kube {
    /// The CRD is created.
    Accepted,
    /// kube-apiserver's validation refuses it with this message.
    Rejected(&'static str),
    /// `crd()` panics with this message.
    Panics(&'static str),
}

struct Case {
    name: &'static str,
    kube: fn() -> CustomResourceDefinition,
    kube_expected: Kube,
    ours: CustomResourceDefinition,
    /// Specs serde writes from the shared type; each must round-trip unpruned.
    samples: Vec<serde_json::Value>,
}

fn spec<T: Serialize>(value: T) -> serde_json::Value {
    serde_json::to_value(value).unwrap()
}

fn cases() -> Vec<Case> {
    use Kube::*;
    const UNTYPED: &str = "type: Required value: must not be empty for specified object fields";
    const TAG_PANIC: &str =
        "The schemas for a property used in multiple subschemas must be identical";
    vec![
        Case {
            name: "untagged number-or-string",
            kube: Amounted::crd,
            kube_expected: Rejected(UNTYPED),
            ours: OurAmounted::crd(),
            samples: vec![
                spec(AmountedSpec {
                    amount: Amount::Int(3),
                }),
                spec(AmountedSpec {
                    amount: Amount::Text("10Gi".into()),
                }),
            ],
        },
        Case {
            name: "untagged struct variants",
            kube: Sourced::crd,
            kube_expected: Accepted,
            ours: OurSourced::crd(),
            samples: vec![
                spec(SourcedSpec {
                    source: Source::Git {
                        url: "https://example.com/r.git".into(),
                        branch: Some("main".into()),
                    },
                }),
                spec(SourcedSpec {
                    source: Source::Image {
                        image: "busybox:1".into(),
                    },
                }),
            ],
        },
        Case {
            name: "externally tagged struct variants",
            kube: Acting::crd,
            kube_expected: Accepted,
            ours: OurActing::crd(),
            samples: vec![
                spec(ActingSpec {
                    action: Action::Log { level: 2 },
                }),
                spec(ActingSpec {
                    action: Action::Forward { to: "sink".into() },
                }),
            ],
        },
        Case {
            name: "internally tagged",
            kube: Stored::crd,
            kube_expected: Panics(TAG_PANIC),
            ours: OurStored::crd(),
            samples: vec![
                spec(StoredSpec {
                    backend: Backend::S3 { bucket: "b".into() },
                }),
                spec(StoredSpec {
                    backend: Backend::Gcs {
                        bucket: "b".into(),
                        project: "p".into(),
                    },
                }),
            ],
        },
        Case {
            name: "adjacently tagged",
            kube: Probed::crd,
            kube_expected: Panics(TAG_PANIC),
            ours: OurProbed::crd(),
            samples: vec![
                spec(ProbedSpec {
                    probe: Probe::Http {
                        path: "/healthz".into(),
                    },
                }),
                spec(ProbedSpec {
                    probe: Probe::Tcp { port: 8080 },
                }),
            ],
        },
        Case {
            name: "serde_json::Value",
            kube: Configured::crd,
            kube_expected: Rejected(UNTYPED),
            ours: OurConfigured::crd(),
            samples: vec![spec(ConfiguredSpec {
                config: serde_json::json!({"a": [1, {"b": "c"}], "d": true}),
            })],
        },
        Case {
            name: "flattened struct",
            kube: Flattened::crd,
            kube_expected: Accepted,
            ours: OurFlattened::crd(),
            samples: vec![spec(FlattenedSpec {
                name: "n".into(),
                common: Common { team: "t".into() },
            })],
        },
        Case {
            name: "flattened map",
            kube: Extended::crd,
            kube_expected: Rejected("additionalProperties and properties are mutual exclusive"),
            ours: OurExtended::crd(),
            samples: vec![spec(ExtendedSpec {
                name: "n".into(),
                extra: BTreeMap::from([("x".into(), "y".into())]),
            })],
        },
        Case {
            name: "optional unit-only enum",
            kube: Moded::crd,
            kube_expected: Accepted,
            ours: OurModed::crd(),
            samples: vec![
                spec(ModedSpec {
                    mode: Some(Mode::Fast),
                }),
                spec(ModedSpec { mode: None }),
            ],
        },
    ]
}

#[tokio::test]
async fn where_kube_derive_is_rejected_ours_is_accepted_and_never_the_other_way() {
    let mut summary = Vec::new();
    for case in cases() {
        let kube = match kube_crd(case.kube) {
            Ok(crd) => create(crd).await,
            Err(panic) => Err(format!("panicked: {panic}")),
        };
        match (&case.kube_expected, &kube) {
            (Kube::Accepted, Ok(())) => {}
            (Kube::Rejected(msg), Err(e)) if e.contains("422") && e.contains(msg) => {}
            (Kube::Panics(msg), Err(e)) if e.starts_with("panicked") && e.contains(msg) => {}
            (expected, got) => panic!(
                "{}: kube-derive expected {expected:?}, got {got:?}",
                case.name
            ),
        }
        summary.push(format!(
            "{}: kube-derive {:?}",
            case.name, case.kube_expected
        ));

        // Ours: accepted by the API, and every object serde writes round-trips unpruned.
        let plural = case.ours.spec.names.plural.clone();
        let kind = case.ours.spec.names.kind.clone();
        create(case.ours.clone())
            .await
            .unwrap_or_else(|e| panic!("{}: ours refused: {e}", case.name));
        let server = TestServer::start().await.unwrap();
        server
            .load_crd_yaml(&serde_json::to_string(&case.ours).unwrap())
            .unwrap();
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("side.kubegen.dev", "v1", &kind),
            &plural,
        );
        let objects = DynamicClient::namespaced(server.client().unwrap(), &ar, "default");
        for (i, sample) in case.samples.iter().enumerate() {
            let mut object = DynamicObject::new(&format!("sample-{i}"), &ar);
            object.data = serde_json::json!({ "spec": sample });
            let created = objects
                .create(&PostParams::default(), &object)
                .await
                .unwrap_or_else(|e| panic!("{}: {sample} refused: {e}", case.name));
            assert_eq!(
                &created.data["spec"], sample,
                "{}: pruned or changed",
                case.name
            );
        }
    }
    println!("{}", summary.join("\n"));
}

/// The derive sees only a field's type name: `Probe` here is this file's enum, not
/// k8s-openapi's `core/v1` `Probe`. The type decides (its own `kubegen::Schema` when it
/// has one, Kubernetes' schema only for a k8s-openapi type), so the name never smuggles in
/// the wrong schema.
#[test]
fn a_type_named_like_a_k8s_openapi_type_keeps_its_own_schema() {
    let crd = serde_json::to_value(OurProbed::crd()).unwrap();
    let probe = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["probe"];
    assert!(probe["properties"].get("kind").is_some(), "{probe}");
    assert!(probe["properties"].get("httpGet").is_none(), "{probe}");
    // And a bare k8s-openapi name still gets Kubernetes' schema.
    let crd = serde_json::to_value(k8s_side::WithK8sProbe::crd()).unwrap();
    let probe = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["probe"];
    assert!(probe["properties"].get("httpGet").is_some(), "{probe}");
}

mod k8s_side {
    use k8s_openapi::api::core::v1::Probe;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::{Deserialize, Serialize};

    /// A resource embedding k8s-openapi's `Probe` by its bare name.
    #[derive(kubegen::Schema, Serialize, Deserialize)]
    #[resource(
        group = "side.kubegen.dev",
        version = "v1",
        kind = "Pod2",
        plural = "pod2s"
    )]
    pub struct WithK8sProbe {
        metadata: ObjectMeta,
        /// k8s-openapi's, imported by `use`.
        probe: Probe,
    }
}
