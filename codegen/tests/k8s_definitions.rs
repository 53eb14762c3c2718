//! `codegen/src/crd/k8s_definitions.json` is k8s-openapi's own schemas (its `schemars`
//! impls, generated from Kubernetes' OpenAPI document) for the types a CRD field may
//! embed, with every definition they refer to. The CRD generator reads Rust source and
//! cannot call `JsonSchema` on a type it only names, so the definitions are committed;
//! this test regenerates them and fails when the committed file differs (after a
//! k8s-openapi upgrade, `KUBEGEN_UPDATE_DEFINITIONS=1 cargo test -p kubegen-codegen --test
//! k8s_definitions` rewrites it). Roots: the types CRDs commonly embed; everything they
//! refer to comes along.

use std::path::Path;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

/// Adds `T`'s definition and every definition it refers to.
fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

fn definitions() -> Map<String, Value> {
    let mut generator = SchemaGenerator::default();
    add::<core::PodTemplateSpec>(&mut generator);
    add::<core::PodSpec>(&mut generator);
    add::<core::ResourceRequirements>(&mut generator);
    add::<core::ObjectReference>(&mut generator);
    add::<core::LocalObjectReference>(&mut generator);
    add::<core::TypedLocalObjectReference>(&mut generator);
    add::<core::SecretReference>(&mut generator);
    add::<core::PersistentVolumeClaimSpec>(&mut generator);
    add::<core::PersistentVolumeClaimTemplate>(&mut generator);
    add::<core::ServicePort>(&mut generator);
    add::<core::ServiceSpec>(&mut generator);
    add::<core::NodeSpec>(&mut generator);
    add::<core::SecretKeySelector>(&mut generator);
    add::<core::ConfigMapKeySelector>(&mut generator);
    add::<apps::DeploymentStrategy>(&mut generator);
    add::<batch::JobSpec>(&mut generator);
    add::<meta::Condition>(&mut generator);
    add::<meta::LabelSelector>(&mut generator);
    add::<meta::OwnerReference>(&mut generator);
    add::<meta::MicroTime>(&mut generator);
    // Every built-in resource of the runtime's API tree (`runtime/src/apis`): the
    // apply configurations of the built-in clientset are generated from these.
    add::<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration>(
        &mut generator,
    );
    add::<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy>(&mut generator);
    add::<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding>(
        &mut generator,
    );
    add::<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration>(
        &mut generator,
    );
    add::<k8s_openapi::api::apps::v1::ControllerRevision>(&mut generator);
    add::<k8s_openapi::api::apps::v1::DaemonSet>(&mut generator);
    add::<k8s_openapi::api::apps::v1::Deployment>(&mut generator);
    add::<k8s_openapi::api::apps::v1::ReplicaSet>(&mut generator);
    add::<k8s_openapi::api::apps::v1::StatefulSet>(&mut generator);
    add::<k8s_openapi::api::authentication::v1::SelfSubjectReview>(&mut generator);
    add::<k8s_openapi::api::authentication::v1::TokenReview>(&mut generator);
    add::<k8s_openapi::api::authorization::v1::LocalSubjectAccessReview>(&mut generator);
    add::<k8s_openapi::api::authorization::v1::SelfSubjectAccessReview>(&mut generator);
    add::<k8s_openapi::api::authorization::v1::SelfSubjectRulesReview>(&mut generator);
    add::<k8s_openapi::api::authorization::v1::SubjectAccessReview>(&mut generator);
    add::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>(&mut generator);
    add::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>(&mut generator);
    add::<k8s_openapi::api::batch::v1::CronJob>(&mut generator);
    add::<k8s_openapi::api::batch::v1::Job>(&mut generator);
    add::<k8s_openapi::api::certificates::v1::CertificateSigningRequest>(&mut generator);
    add::<k8s_openapi::api::coordination::v1::Lease>(&mut generator);
    add::<k8s_openapi::api::core::v1::ComponentStatus>(&mut generator);
    add::<k8s_openapi::api::core::v1::ConfigMap>(&mut generator);
    add::<k8s_openapi::api::core::v1::Endpoints>(&mut generator);
    add::<k8s_openapi::api::core::v1::Event>(&mut generator);
    add::<k8s_openapi::api::core::v1::LimitRange>(&mut generator);
    add::<k8s_openapi::api::core::v1::Namespace>(&mut generator);
    add::<k8s_openapi::api::core::v1::Node>(&mut generator);
    add::<k8s_openapi::api::core::v1::PersistentVolume>(&mut generator);
    add::<k8s_openapi::api::core::v1::PersistentVolumeClaim>(&mut generator);
    add::<k8s_openapi::api::core::v1::Pod>(&mut generator);
    add::<k8s_openapi::api::core::v1::PodTemplate>(&mut generator);
    add::<k8s_openapi::api::core::v1::ReplicationController>(&mut generator);
    add::<k8s_openapi::api::core::v1::ResourceQuota>(&mut generator);
    add::<k8s_openapi::api::core::v1::Secret>(&mut generator);
    add::<k8s_openapi::api::core::v1::Service>(&mut generator);
    add::<k8s_openapi::api::core::v1::ServiceAccount>(&mut generator);
    add::<k8s_openapi::api::discovery::v1::EndpointSlice>(&mut generator);
    add::<k8s_openapi::api::events::v1::Event>(&mut generator);
    add::<k8s_openapi::api::flowcontrol::v1::FlowSchema>(&mut generator);
    add::<k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration>(&mut generator);
    add::<k8s_openapi::api::networking::v1::IPAddress>(&mut generator);
    add::<k8s_openapi::api::networking::v1::Ingress>(&mut generator);
    add::<k8s_openapi::api::networking::v1::IngressClass>(&mut generator);
    add::<k8s_openapi::api::networking::v1::NetworkPolicy>(&mut generator);
    add::<k8s_openapi::api::networking::v1::ServiceCIDR>(&mut generator);
    add::<k8s_openapi::api::node::v1::RuntimeClass>(&mut generator);
    add::<k8s_openapi::api::policy::v1::PodDisruptionBudget>(&mut generator);
    add::<k8s_openapi::api::rbac::v1::ClusterRole>(&mut generator);
    add::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>(&mut generator);
    add::<k8s_openapi::api::rbac::v1::Role>(&mut generator);
    add::<k8s_openapi::api::rbac::v1::RoleBinding>(&mut generator);
    add::<k8s_openapi::api::scheduling::v1::PriorityClass>(&mut generator);
    add::<k8s_openapi::api::storage::v1::CSIDriver>(&mut generator);
    add::<k8s_openapi::api::storage::v1::CSINode>(&mut generator);
    add::<k8s_openapi::api::storage::v1::CSIStorageCapacity>(&mut generator);
    add::<k8s_openapi::api::storage::v1::StorageClass>(&mut generator);
    add::<k8s_openapi::api::storage::v1::VolumeAttachment>(&mut generator);
    add::<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>(&mut generator);
    add::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>(&mut generator);
    generator
        .take_definitions(true)
        .into_iter()
        .map(|(k, v)| (k, strip_refs_prefix(v)))
        .collect()
}

/// `#/$defs/X` → `X` (the generator resolves plain definition names).
fn strip_refs_prefix(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get_mut("$ref")
                    && let Some(name) = r.strip_prefix("#/$defs/")
                {
                    *r = name.to_owned();
                }
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

#[test]
fn committed_definitions_are_k8s_openapis() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/crd/k8s_definitions.json");
    let mut want = serde_json::to_string_pretty(&Value::Object(definitions())).expect("json");
    want.push('\n');
    if std::env::var_os("KUBEGEN_UPDATE_DEFINITIONS").is_some() {
        std::fs::write(&path, &want).expect("write definitions");
    }
    let have = std::fs::read_to_string(&path).expect("read definitions");
    assert!(
        have == want,
        "{} is stale: run KUBEGEN_UPDATE_DEFINITIONS=1 cargo test -p kubegen-codegen --test k8s_definitions",
        path.display()
    );
}

/// The Kubernetes version (`"1_36"`) that introduced each definition's k8s-openapi type,
/// for those newer than k8s-openapi's earliest: read from k8s-openapi's own source tree
/// (one `src/v1_NN/` per version, each module's `mod.rs` re-exporting its types).
fn since_versions(defs: &Map<String, Value>) -> Map<String, Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Only this platform's packages: a fresh machine has downloaded no others, and
    // `--offline` would fail on the first one missing (android_system_properties).
    let version = std::process::Command::new(&cargo)
        .arg("-vV")
        .output()
        .expect("cargo -vV runs");
    let version = String::from_utf8_lossy(&version.stdout);
    let host = version
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("cargo -vV names its host")
        .trim()
        .to_owned();
    let out = std::process::Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let manifest = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == "k8s-openapi")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("k8s-openapi in the dependency graph");
    let src = Path::new(manifest).parent().expect("crate dir").join("src");
    let mut versions: Vec<(u32, String)> = std::fs::read_dir(&src)
        .expect("k8s-openapi source")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            let minor = name.strip_prefix("v1_")?.parse().ok()?;
            Some((minor, name))
        })
        .collect();
    versions.sort();
    let mut out = Map::new();
    for name in defs.keys() {
        let path = name
            .strip_prefix("io.k8s.")
            .unwrap_or(name)
            .replace('-', "_");
        let mut parts: Vec<&str> = path.split('.').collect();
        let ty = parts.pop().expect("type name");
        let export = format!("::{ty};");
        let first = versions.iter().position(|(_, v)| {
            let module = src.join(v).join(parts.join("/")).join("mod.rs");
            std::fs::read_to_string(module).is_ok_and(|text| text.contains(&export))
        });
        match first {
            Some(0) => {}
            Some(i) => {
                out.insert(name.clone(), Value::String(format!("1_{}", versions[i].0)));
            }
            None => panic!("{name}: no k8s-openapi version has `{ty}`"),
        }
    }
    out
}

#[test]
fn committed_since_versions_are_k8s_openapis() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/crd/k8s_since.json");
    let mut want =
        serde_json::to_string_pretty(&Value::Object(since_versions(&definitions()))).expect("json");
    want.push('\n');
    if std::env::var_os("KUBEGEN_UPDATE_DEFINITIONS").is_some() {
        std::fs::write(&path, &want).expect("write since versions");
    }
    let have = std::fs::read_to_string(&path).expect("read since versions");
    assert!(
        have == want,
        "{} is stale: run KUBEGEN_UPDATE_DEFINITIONS=1 cargo test -p kubegen-codegen --test k8s_definitions",
        path.display()
    );
}
