//! The Ship webhooks, with their markers in every comment style and place.
//!
//! +kubebuilder:webhook:path=/mutate-ships-kubegen-dev-v2-ship,mutating=true,failurePolicy=fail,sideEffects=None,groups=ships.kubegen.dev,resources=ships,verbs=create;update,versions=v2,name=mship-v2.kb.io,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded

/// The v1 validator (a second validating webhook, sorted before `vship-v2` by name).
///
/// +kubebuilder:webhook:path=/validate-ships-kubegen-dev-v1-ship,mutating=false,failurePolicy=Ignore,sideEffects=NoneOnDryRun,groups=ships.kubegen.dev,resources=ships;ships/scale,verbs=create;update,versions=v1,name=vship-v1.kb.io,admissionReviewVersions=v1;v1beta1,matchPolicy=Exact,timeoutSeconds=5
pub struct ShipValidator;

pub fn pods() {
    // A webhook on a built-in resource, by URL, in a comment inside a function:
    // +kubebuilder:webhook:url="https://hooks.example.com/mutate-pods",mutating=true,failurePolicy=ignore,sideEffects=None,groups=core,resources=pods,verbs=create,versions=v1,name=mpod.hooks.example.com,admissionReviewVersions=v1
}
