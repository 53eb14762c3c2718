//! The Widget (example.com/v1alpha1) admission webhooks:
//! defaulting (a mutating webhook) and validation (a validating webhook).
//!
//! `hack/update-codegen.sh` writes the markers below into `config/webhook/manifests.yaml`
//! (controller-gen's `webhook` generator: path, rules, failure policy and side effects of
//! each webhook); serve the handlers with `kubegen::webhook` (every replica serves, not
//! only the leader) and install the manifests with the server's CA bundle.
//!
//! +kubebuilder:webhook:path=/mutate-example-com-v1alpha1-widget,mutating=true,failurePolicy=fail,sideEffects=None,groups=example.com,resources=widgets,verbs=create;update,versions=v1alpha1,name=mwidget-v1alpha1.kb.io,admissionReviewVersions=v1
//! +kubebuilder:webhook:path=/validate-example-com-v1alpha1-widget,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.com,resources=widgets,verbs=create;update,versions=v1alpha1,name=vwidget-v1alpha1.kb.io,admissionReviewVersions=v1

use kubegen::webhook::{Defaulter, Denied, Validator, Warnings};

use crate::apis::example::v1alpha1::Widget;

/// The label the defaulter sets on every Widget that has none.
pub const NAME_LABEL: &str = "app.kubernetes.io/name";

/// Fills in what a Widget leaves out before it is stored (the mutating webhook
/// `mwidget-v1alpha1.kb.io`, on create and update; the webhook answers with the
/// JSON patch of the changes). Constant defaults belong in the CRD
/// (`+kubebuilder:default` on the field); defaults that depend on other fields go here.
/// An `Err(Denied::new(...))` refuses the request instead.
#[derive(Clone, Copy, Debug, Default)]
pub struct WidgetDefaulter;

impl Defaulter<Widget> for WidgetDefaulter {
    async fn default(&self, obj: &mut Widget) -> Result<(), Denied> {
        obj.metadata
            .labels
            .get_or_insert_with(Default::default)
            .entry(NAME_LABEL.to_owned())
            .or_insert_with(|| "widget".to_owned());
        Ok(())
    }
}

/// The longest name a Widget may have: the controller labels its pods with it, and a
/// label value has 63 characters at most.
pub const MAX_NAME_LENGTH: usize = 63;

/// Refuses Widgets the controller cannot serve (the validating webhook
/// `vwidget-v1alpha1.kb.io`, on create and update; add `delete` to the marker's
/// verbs to have deletes validated too: a webhook that is down then blocks them).
#[derive(Clone, Copy, Debug, Default)]
pub struct WidgetValidator;

impl Validator<Widget> for WidgetValidator {
    async fn validate_create(&self, obj: &Widget) -> Result<Warnings, Denied> {
        validate(obj)
    }

    async fn validate_update(&self, _old: &Widget, new: &Widget) -> Result<Warnings, Denied> {
        validate(new)
    }

    async fn validate_delete(&self, _obj: &Widget) -> Result<Warnings, Denied> {
        Ok(Warnings::default())
    }
}

/// The rules of a Widget, on create and on update.
fn validate(obj: &Widget) -> Result<Warnings, Denied> {
    let name = obj.metadata.name.as_deref().unwrap_or_default();
    if name.len() > MAX_NAME_LENGTH {
        return Err(Denied::new(format!(
            "metadata.name: {name:?} is longer than {MAX_NAME_LENGTH} characters (it labels the Widget's pods)"
        )));
    }
    Ok(Warnings::default())
}
