//! The marked aliases of `kubegen::apis` agree with k8s-openapi: for every generated
//! built-in resource, the generator's model (group, version, resource name, scope) is
//! what the aliased type's `Resource` impl says, and the verb markers give client-go's
//! shape (status only with a status subresource, create-only reviews, scale extensions).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns unwrap too

use std::collections::BTreeMap;
use std::path::Path;

use kubegen::ResourceScope;
use kubegen_codegen::model::{ResourceDef, Scope, Verb};
use kubegen_codegen::{Config, Generator};

/// The generator's resources of `runtime/src/apis`, by `<group dir>/<version>/<Kind>`.
fn resource_defs() -> BTreeMap<String, ResourceDef> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = Config::new(
        root.join("src/apis"),
        root.join("src/kubernetes"),
        "crate::kubernetes",
    )
    .input_module("crate::apis");
    let mut defs = BTreeMap::new();
    for (dir, package) in Generator::new(config).unwrap().packages().unwrap() {
        for (_, r) in package.resources() {
            let key = format!("{}/{}", dir.relative.display(), r.kind);
            defs.insert(key, r.clone());
        }
    }
    defs
}

fn check<K: kubegen::Object>(defs: &BTreeMap<String, ResourceDef>, dir: &str) {
    let kind = K::kind(&());
    let r = defs
        .get(&format!("{dir}/{kind}"))
        .unwrap_or_else(|| panic!("{dir}/{kind} is not generated"));
    assert_eq!(r.group, K::group(&()), "{dir}/{kind} group");
    assert_eq!(r.version, K::version(&()), "{dir}/{kind} version");
    assert_eq!(r.plural, K::plural(&()), "{dir}/{kind} resource name");
    let namespaced = <K::Scope as ResourceScope>::NAMESPACED;
    assert_eq!(
        r.scope == Scope::Namespaced,
        namespaced,
        "{dir}/{kind} scope"
    );
}

#[test]
fn every_alias_matches_its_k8s_openapi_resource() {
    let defs = resource_defs();
    check::<kubegen::apis::admissionregistration::v1::MutatingWebhookConfiguration>(
        &defs,
        "admissionregistration/v1",
    );
    check::<kubegen::apis::admissionregistration::v1::ValidatingAdmissionPolicy>(
        &defs,
        "admissionregistration/v1",
    );
    check::<kubegen::apis::admissionregistration::v1::ValidatingAdmissionPolicyBinding>(
        &defs,
        "admissionregistration/v1",
    );
    check::<kubegen::apis::admissionregistration::v1::ValidatingWebhookConfiguration>(
        &defs,
        "admissionregistration/v1",
    );
    check::<kubegen::apis::apiextensions::v1::CustomResourceDefinition>(&defs, "apiextensions/v1");
    check::<kubegen::apis::apiregistration::v1::APIService>(&defs, "apiregistration/v1");
    check::<kubegen::apis::apps::v1::ControllerRevision>(&defs, "apps/v1");
    check::<kubegen::apis::apps::v1::DaemonSet>(&defs, "apps/v1");
    check::<kubegen::apis::apps::v1::Deployment>(&defs, "apps/v1");
    check::<kubegen::apis::apps::v1::ReplicaSet>(&defs, "apps/v1");
    check::<kubegen::apis::apps::v1::StatefulSet>(&defs, "apps/v1");
    check::<kubegen::apis::authentication::v1::SelfSubjectReview>(&defs, "authentication/v1");
    check::<kubegen::apis::authentication::v1::TokenReview>(&defs, "authentication/v1");
    check::<kubegen::apis::authorization::v1::LocalSubjectAccessReview>(&defs, "authorization/v1");
    check::<kubegen::apis::authorization::v1::SelfSubjectAccessReview>(&defs, "authorization/v1");
    check::<kubegen::apis::authorization::v1::SelfSubjectRulesReview>(&defs, "authorization/v1");
    check::<kubegen::apis::authorization::v1::SubjectAccessReview>(&defs, "authorization/v1");
    check::<kubegen::apis::autoscaling::v1::HorizontalPodAutoscaler>(&defs, "autoscaling/v1");
    check::<kubegen::apis::autoscaling::v2::HorizontalPodAutoscaler>(&defs, "autoscaling/v2");
    check::<kubegen::apis::batch::v1::CronJob>(&defs, "batch/v1");
    check::<kubegen::apis::batch::v1::Job>(&defs, "batch/v1");
    check::<kubegen::apis::certificates::v1::CertificateSigningRequest>(&defs, "certificates/v1");
    check::<kubegen::apis::coordination::v1::Lease>(&defs, "coordination/v1");
    check::<kubegen::apis::core::v1::ComponentStatus>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::ConfigMap>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::Endpoints>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::Event>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::LimitRange>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::Namespace>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::Node>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::PersistentVolume>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::PersistentVolumeClaim>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::Pod>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::PodTemplate>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::ReplicationController>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::ResourceQuota>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::Secret>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::Service>(&defs, "core/v1");
    check::<kubegen::apis::core::v1::ServiceAccount>(&defs, "core/v1");
    check::<kubegen::apis::discovery::v1::EndpointSlice>(&defs, "discovery/v1");
    check::<kubegen::apis::events::v1::Event>(&defs, "events/v1");
    check::<kubegen::apis::flowcontrol::v1::FlowSchema>(&defs, "flowcontrol/v1");
    check::<kubegen::apis::flowcontrol::v1::PriorityLevelConfiguration>(&defs, "flowcontrol/v1");
    check::<kubegen::apis::networking::v1::Ingress>(&defs, "networking/v1");
    check::<kubegen::apis::networking::v1::IngressClass>(&defs, "networking/v1");
    check::<kubegen::apis::networking::v1::IPAddress>(&defs, "networking/v1");
    check::<kubegen::apis::networking::v1::NetworkPolicy>(&defs, "networking/v1");
    check::<kubegen::apis::networking::v1::ServiceCIDR>(&defs, "networking/v1");
    check::<kubegen::apis::node::v1::RuntimeClass>(&defs, "node/v1");
    check::<kubegen::apis::policy::v1::PodDisruptionBudget>(&defs, "policy/v1");
    check::<kubegen::apis::rbac::v1::ClusterRole>(&defs, "rbac/v1");
    check::<kubegen::apis::rbac::v1::ClusterRoleBinding>(&defs, "rbac/v1");
    check::<kubegen::apis::rbac::v1::Role>(&defs, "rbac/v1");
    check::<kubegen::apis::rbac::v1::RoleBinding>(&defs, "rbac/v1");
    check::<kubegen::apis::scheduling::v1::PriorityClass>(&defs, "scheduling/v1");
    check::<kubegen::apis::storage::v1::CSIDriver>(&defs, "storage/v1");
    check::<kubegen::apis::storage::v1::CSINode>(&defs, "storage/v1");
    check::<kubegen::apis::storage::v1::CSIStorageCapacity>(&defs, "storage/v1");
    check::<kubegen::apis::storage::v1::StorageClass>(&defs, "storage/v1");
    check::<kubegen::apis::storage::v1::VolumeAttachment>(&defs, "storage/v1");
    assert_eq!(defs.len(), 60, "every generated resource is checked");
}

#[test]
fn verb_markers_give_client_go_shapes() {
    let defs = resource_defs();
    let d = &defs["apps/v1/Deployment"];
    assert!(d.has_verb(Verb::UpdateStatus) && d.has_informer() && d.has_lister());
    let scale: Vec<_> = d.extensions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(scale, ["GetScale", "UpdateScale"]);
    for kind in [
        "core/v1/ConfigMap",
        "core/v1/Secret",
        "rbac/v1/Role",
        "coordination/v1/Lease",
    ] {
        let r = &defs[kind];
        assert!(!r.has_verb(Verb::UpdateStatus), "{kind} has no status");
        assert!(r.has_verb(Verb::Update), "{kind} updates");
    }
    for kind in [
        "core/v1/Pod",
        "core/v1/Node",
        "batch/v1/Job",
        "apps/v1/StatefulSet",
    ] {
        assert!(defs[kind].has_verb(Verb::UpdateStatus), "{kind} has status");
    }
    for kind in [
        "authentication/v1/TokenReview",
        "authentication/v1/SelfSubjectReview",
        "authorization/v1/SubjectAccessReview",
        "authorization/v1/LocalSubjectAccessReview",
    ] {
        let r = &defs[kind];
        assert_eq!(r.client_verbs(), [Verb::Create], "{kind} is create-only");
        assert!(!r.has_lister() && !r.has_informer(), "{kind}");
    }
    let cs = &defs["core/v1/ComponentStatus"];
    assert!(cs.has_lister() && !cs.has_verb(Verb::Watch) && !cs.has_informer());
}
