//! The fake of kubegen's built-in clientset ([`kubegen::kubernetes`]): client-go's
//! `kubernetes/fake` package.
//!
//! `kubegen-codegen --with-fake` generates this module for custom API trees, but not for
//! the runtime's built-in tree: a fake stands on this crate's in-process server, and the
//! runtime crate cannot depend on the test server (the test server depends on the
//! runtime). So it lives here, written like the generated one: a [`Clientset`] over a
//! [`Fake`] that dereferences to the real
//! `kubegen::kubernetes::clientset::versioned::Clientset`.
//!
//! ```
//! # #![allow(clippy::unwrap_used)]
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kubegen_testserver::fake::kubernetes::new_simple_clientset;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let cs = new_simple_clientset();
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! cm.metadata.namespace = Some("default".into());
//! cs.add(&cm).unwrap();
//! assert!(cs.core_v1().config_maps("default").get("settings").await.is_ok());
//! assert!(cs.fake().actions().iter().any(|a| a.matches("get", "configmaps")));
//! # }
//! ```

use std::ops::Deref;

use kubegen::kubernetes::clientset::versioned;

use super::{Fake, FakeError};

/// The built-in clientset over an in-process server; dereferences to the real
/// [`versioned::Clientset`].
#[derive(Clone, Debug)]
pub struct Clientset {
    clientset: versioned::Clientset,
    fake: Fake,
}

impl Clientset {
    /// An empty fake server that serves every built-in resource of the clientset.
    pub fn new() -> Self {
        let fake = Fake::new();
        register_builtins(&fake);
        Self {
            clientset: versioned::Clientset::new(fake.client()),
            fake,
        }
    }

    /// Seeds `obj` without recording an action (client-go's tracker `Add`).
    pub fn add<K: kubegen::Object>(&self, obj: &K) -> Result<(), FakeError> {
        self.fake.add(obj)
    }

    /// The fake server: its action log and reactors.
    pub fn fake(&self) -> &Fake {
        &self.fake
    }
}

impl Default for Clientset {
    fn default() -> Self {
        Self::new()
    }
}

impl Deref for Clientset {
    type Target = versioned::Clientset;

    fn deref(&self) -> &versioned::Clientset {
        &self.clientset
    }
}

/// An empty fake built-in clientset (client-go's `fake.NewSimpleClientset`).
pub fn new_simple_clientset() -> Clientset {
    Clientset::new()
}

/// Serves every resource of `kubegen::apis` (types the test server already serves stay
/// as they are); the flag is whether the type has a `/status` subresource, as its
/// `+genclient:noStatus` marker says.
fn register_builtins(fake: &Fake) {
    fake.register::<kubegen::apis::admissionregistration::v1::MutatingWebhookConfiguration>(false);
    fake.register::<kubegen::apis::admissionregistration::v1::ValidatingAdmissionPolicy>(true);
    fake.register::<kubegen::apis::admissionregistration::v1::ValidatingAdmissionPolicyBinding>(
        false,
    );
    fake.register::<kubegen::apis::admissionregistration::v1::ValidatingWebhookConfiguration>(
        false,
    );
    fake.register::<kubegen::apis::apiextensions::v1::CustomResourceDefinition>(true);
    fake.register::<kubegen::apis::apiregistration::v1::APIService>(true);
    fake.register::<kubegen::apis::apps::v1::ControllerRevision>(false);
    fake.register::<kubegen::apis::apps::v1::DaemonSet>(true);
    fake.register::<kubegen::apis::apps::v1::Deployment>(true);
    fake.register::<kubegen::apis::apps::v1::ReplicaSet>(true);
    fake.register::<kubegen::apis::apps::v1::StatefulSet>(true);
    fake.register::<kubegen::apis::authentication::v1::SelfSubjectReview>(true);
    fake.register::<kubegen::apis::authentication::v1::TokenReview>(true);
    fake.register::<kubegen::apis::authorization::v1::LocalSubjectAccessReview>(true);
    fake.register::<kubegen::apis::authorization::v1::SelfSubjectAccessReview>(true);
    fake.register::<kubegen::apis::authorization::v1::SelfSubjectRulesReview>(true);
    fake.register::<kubegen::apis::authorization::v1::SubjectAccessReview>(true);
    fake.register::<kubegen::apis::autoscaling::v1::HorizontalPodAutoscaler>(true);
    fake.register::<kubegen::apis::autoscaling::v2::HorizontalPodAutoscaler>(true);
    fake.register::<kubegen::apis::batch::v1::CronJob>(true);
    fake.register::<kubegen::apis::batch::v1::Job>(true);
    fake.register::<kubegen::apis::certificates::v1::CertificateSigningRequest>(true);
    fake.register::<kubegen::apis::coordination::v1::Lease>(false);
    fake.register::<kubegen::apis::core::v1::ComponentStatus>(false);
    fake.register::<kubegen::apis::core::v1::ConfigMap>(false);
    fake.register::<kubegen::apis::core::v1::Endpoints>(false);
    fake.register::<kubegen::apis::core::v1::Event>(false);
    fake.register::<kubegen::apis::core::v1::LimitRange>(false);
    fake.register::<kubegen::apis::core::v1::Namespace>(true);
    fake.register::<kubegen::apis::core::v1::Node>(true);
    fake.register::<kubegen::apis::core::v1::PersistentVolume>(true);
    fake.register::<kubegen::apis::core::v1::PersistentVolumeClaim>(true);
    fake.register::<kubegen::apis::core::v1::Pod>(true);
    fake.register::<kubegen::apis::core::v1::PodTemplate>(false);
    fake.register::<kubegen::apis::core::v1::ReplicationController>(true);
    fake.register::<kubegen::apis::core::v1::ResourceQuota>(true);
    fake.register::<kubegen::apis::core::v1::Secret>(false);
    fake.register::<kubegen::apis::core::v1::Service>(true);
    fake.register::<kubegen::apis::core::v1::ServiceAccount>(false);
    fake.register::<kubegen::apis::discovery::v1::EndpointSlice>(false);
    fake.register::<kubegen::apis::events::v1::Event>(false);
    fake.register::<kubegen::apis::flowcontrol::v1::FlowSchema>(true);
    fake.register::<kubegen::apis::flowcontrol::v1::PriorityLevelConfiguration>(true);
    fake.register::<kubegen::apis::networking::v1::Ingress>(true);
    fake.register::<kubegen::apis::networking::v1::IngressClass>(false);
    fake.register::<kubegen::apis::networking::v1::IPAddress>(false);
    fake.register::<kubegen::apis::networking::v1::NetworkPolicy>(false);
    fake.register::<kubegen::apis::networking::v1::ServiceCIDR>(true);
    fake.register::<kubegen::apis::node::v1::RuntimeClass>(false);
    fake.register::<kubegen::apis::policy::v1::PodDisruptionBudget>(true);
    fake.register::<kubegen::apis::rbac::v1::ClusterRole>(false);
    fake.register::<kubegen::apis::rbac::v1::ClusterRoleBinding>(false);
    fake.register::<kubegen::apis::rbac::v1::Role>(false);
    fake.register::<kubegen::apis::rbac::v1::RoleBinding>(false);
    fake.register::<kubegen::apis::scheduling::v1::PriorityClass>(false);
    fake.register::<kubegen::apis::storage::v1::CSIDriver>(false);
    fake.register::<kubegen::apis::storage::v1::CSINode>(false);
    fake.register::<kubegen::apis::storage::v1::CSIStorageCapacity>(false);
    fake.register::<kubegen::apis::storage::v1::StorageClass>(false);
    fake.register::<kubegen::apis::storage::v1::VolumeAttachment>(true);
}
