//! Foo's admission webhooks, served by [`kubegen::webhook`]:
//!
//! * [`FooDefaulter`] (mutating, `/mutate-samplecontroller-k8s-io-v1alpha1-foo`): a Foo
//!   without `spec.deploymentName` gets its own name, so `kubectl create` of a Foo that names
//!   no Deployment works;
//! * [`FooValidator`] (validating, `/validate-samplecontroller-k8s-io-v1alpha1-foo`):
//!   `spec.replicas` between 0 and 10, and `spec.deploymentName` unchanged by updates (the
//!   operator would otherwise leave the old Deployment behind).
//!
//! The markers below are what `kubegen-codegen webhook` reads to write
//! `config/webhook/manifests.yaml` (checked by `hack/verify-codegen.sh`).
//!
//! +kubebuilder:webhook:path=/mutate-samplecontroller-k8s-io-v1alpha1-foo,mutating=true,failurePolicy=fail,sideEffects=None,groups=samplecontroller.k8s.io,resources=foos,verbs=create;update,versions=v1alpha1,name=mfoo-v1alpha1.kb.io,admissionReviewVersions=v1
//! +kubebuilder:webhook:path=/validate-samplecontroller-k8s-io-v1alpha1-foo,mutating=false,failurePolicy=fail,sideEffects=None,groups=samplecontroller.k8s.io,resources=foos,verbs=create;update,versions=v1alpha1,name=vfoo-v1alpha1.kb.io,admissionReviewVersions=v1

use kubegen::webhook::{
    Admission, Defaulter, Denied, Server, ServerBuilder, Validator, Warnings, mutate_path,
    validate_path,
};

use crate::Foo;

/// The most replicas a Foo may ask for.
pub const MAX_REPLICAS: i32 = 10;

/// Fills in what a Foo may leave out.
#[derive(Clone, Copy, Debug, Default)]
pub struct FooDefaulter;

impl Defaulter<Foo> for FooDefaulter {
    async fn default(&self, foo: &mut Foo) -> Result<(), Denied> {
        if foo.spec.deployment_name.is_empty()
            && let Some(name) = &foo.metadata.name
        {
            foo.spec.deployment_name = name.clone();
        }
        Ok(())
    }
}

/// Refuses Foos the operator cannot serve.
#[derive(Clone, Copy, Debug, Default)]
pub struct FooValidator;

impl Validator<Foo> for FooValidator {
    async fn validate_create(&self, foo: &Foo) -> Result<Warnings, Denied> {
        check_replicas(foo)
    }

    async fn validate_update(&self, old: &Foo, new: &Foo) -> Result<Warnings, Denied> {
        if old.spec.deployment_name != new.spec.deployment_name {
            return Err(Denied::invalid(format!(
                "spec.deploymentName: Invalid value: {:?}: field is immutable",
                new.spec.deployment_name
            )));
        }
        check_replicas(new)
    }
}

fn check_replicas(foo: &Foo) -> Result<Warnings, Denied> {
    match foo.spec.replicas {
        Some(n) if !(0..=MAX_REPLICAS).contains(&n) => Err(Denied::invalid(format!(
            "spec.replicas: Invalid value: {n}: must be between 0 and {MAX_REPLICAS}"
        ))),
        _ => Ok(Warnings::new()),
    }
}

/// The webhook server's routes for Foo, on `builder` (its address and certificates are the
/// caller's).
pub fn routes(builder: ServerBuilder) -> ServerBuilder {
    builder
        .admission(
            mutate_path::<Foo>(),
            Admission::defaulting::<Foo, _>(FooDefaulter),
        )
        .admission(
            validate_path::<Foo>(),
            Admission::validating::<Foo, _>(FooValidator),
        )
}

/// A server with Foo's routes.
pub fn server(builder: ServerBuilder) -> Result<Server, kubegen::webhook::ServerError> {
    routes(builder).build()
}
