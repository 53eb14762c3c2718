//! Admission webhooks (kube-apiserver's `MutatingAdmissionWebhook` and
//! `ValidatingAdmissionWebhook` plugins, `k8s.io/apiserver/pkg/admission/plugin/webhook`):
//! the hooks of the stored Mutating/ValidatingWebhookConfigurations
//! (admissionregistration.k8s.io/v1), called over HTTPS with an `admission.k8s.io/v1`
//! AdmissionReview.
//!
//! * [`Hook`]: one webhook of a configuration, read with kube-apiserver's defaults
//!   (`failurePolicy: Fail`, `matchPolicy: Equivalent`, `timeoutSeconds: 10`, empty
//!   selectors matching everything), sorted by configuration name, then by position.
//! * [`matching`]: whether a hook is called for a request (`generic/webhook.go`
//!   `ShouldCallHook`): `rules`, `namespaceSelector`, `objectSelector`, `matchPolicy`,
//!   `matchConditions`.
//! * [`review`]: the AdmissionReview sent and the checks of the answer
//!   (`request/admissionreview.go`).
//! * [`dispatch`]: the mutating dispatcher (in order, `reinvocationPolicy`) and the
//!   validating one (all at once), with `failurePolicy`, `sideEffects` on dry runs and
//!   kube-apiserver's messages (`mutating/dispatcher.go`, `validating/dispatcher.go`,
//!   `errors/statuserror.go`).

pub(crate) mod dispatch;
pub(crate) mod matching;
pub(crate) mod review;

use std::time::Duration;

use serde_json::Value;

use crate::{
    engine::Engine,
    registry::GroupResource,
    webhook::{ClientConfig, ConfigError},
};

/// The group of the webhook configurations.
pub(crate) const GROUP: &str = "admissionregistration.k8s.io";

/// One rule of a hook (admissionregistration/v1 `RuleWithOperations`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Rule {
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub(crate) operations: Vec<String>,
    /// API groups (`""` the core group) or `*`.
    pub(crate) api_groups: Vec<String>,
    /// Versions or `*`.
    pub(crate) api_versions: Vec<String>,
    /// `pods`, `pods/status`, `*`, `*/scale`, `*/*`.
    pub(crate) resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*` (the default).
    pub(crate) scope: String,
}

/// One webhook of a configuration, with kube-apiserver's defaults filled in.
#[derive(Debug, Clone)]
pub(crate) struct Hook {
    /// The webhook's `name`.
    pub(crate) name: String,
    /// The configuration's name.
    pub(crate) configuration: String,
    /// A position unique among the hooks of one load (for reinvocation).
    pub(crate) index: usize,
    /// Where it is called, or why it cannot be.
    pub(crate) client: Result<ClientConfig, ConfigError>,
    /// The rules; a request matching any is sent.
    pub(crate) rules: Vec<Rule>,
    /// `failurePolicy: Ignore` (the default is `Fail`).
    pub(crate) ignore_failures: bool,
    /// `matchPolicy: Exact` (the default is `Equivalent`).
    pub(crate) exact: bool,
    /// `namespaceSelector` (a LabelSelector; `{}` matches everything).
    pub(crate) namespace_selector: Value,
    /// `objectSelector`.
    pub(crate) object_selector: Value,
    /// `sideEffects` (`None`, `NoneOnDryRun`, `Some`, `Unknown`; absent in old objects).
    pub(crate) side_effects: Option<String>,
    /// `timeoutSeconds` (10 by default).
    pub(crate) timeout: Duration,
    /// `admissionReviewVersions`.
    pub(crate) review_versions: Vec<String>,
    /// `reinvocationPolicy: IfNeeded` (mutating only).
    pub(crate) reinvoke_if_needed: bool,
    /// `matchConditions`: (name, CEL expression).
    pub(crate) match_conditions: Vec<(String, String)>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl Hook {
    /// Reads the `index`th webhook of a configuration.
    fn from_json(configuration: &str, index: usize, hook: &Value) -> Hook {
        let text = |key: &str| hook.get(key).and_then(Value::as_str);
        let rules = hook
            .get("rules")
            .and_then(Value::as_array)
            .map(|rules| {
                rules
                    .iter()
                    .map(|r| Rule {
                        operations: strings(r.get("operations")),
                        api_groups: strings(r.get("apiGroups")),
                        api_versions: strings(r.get("apiVersions")),
                        resources: strings(r.get("resources")),
                        scope: r
                            .get("scope")
                            .and_then(Value::as_str)
                            .unwrap_or("*")
                            .to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let match_conditions = hook
            .get("matchConditions")
            .and_then(Value::as_array)
            .map(|conds| {
                conds
                    .iter()
                    .map(|c| {
                        let field = |k: &str| {
                            c.get(k)
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string()
                        };
                        (field("name"), field("expression"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let selector = |key: &str| hook.get(key).cloned().unwrap_or(Value::Null);
        Hook {
            name: text("name").unwrap_or_default().to_string(),
            configuration: configuration.to_string(),
            index,
            client: ClientConfig::from_json(hook.get("clientConfig").unwrap_or(&Value::Null)),
            rules,
            ignore_failures: text("failurePolicy") == Some("Ignore"),
            exact: text("matchPolicy") == Some("Exact"),
            namespace_selector: selector("namespaceSelector"),
            object_selector: selector("objectSelector"),
            side_effects: text("sideEffects").map(str::to_string),
            timeout: Duration::from_secs(
                hook.get("timeoutSeconds")
                    .and_then(Value::as_u64)
                    .unwrap_or(10)
                    .clamp(1, 30),
            ),
            review_versions: strings(hook.get("admissionReviewVersions")),
            reinvoke_if_needed: text("reinvocationPolicy") == Some("IfNeeded"),
            match_conditions,
        }
    }
}

/// The configurations' resources, and the policy bindings that also make a write take
/// the admitted path.
fn configuration_resource(mutating: bool) -> GroupResource {
    GroupResource::new(
        GROUP,
        if mutating {
            "mutatingwebhookconfigurations"
        } else {
            "validatingwebhookconfigurations"
        },
    )
}

/// Whether any webhook configuration or admission policy binding is stored: only then do
/// writes take the admitted path (`crate::endpoints::handlers`); otherwise they cost
/// nothing more than before.
pub(crate) fn configured(engine: &Engine) -> bool {
    let store = engine.store();
    [
        configuration_resource(true),
        configuration_resource(false),
        GroupResource::new(GROUP, "validatingadmissionpolicybindings"),
        GroupResource::new(GROUP, "mutatingadmissionpolicybindings"),
    ]
    .iter()
    .any(|gr| store.count(gr) > 0)
}

/// The hooks of every stored mutating (or validating) configuration, sorted by
/// configuration name, then by position (kube-apiserver's `configuration.go` sorts the
/// configurations by name).
pub(crate) fn load(engine: &Engine, mutating: bool) -> Vec<Hook> {
    let gr = configuration_resource(mutating);
    let store = engine.store();
    let mut keys = store.keys(&gr, None);
    keys.sort();
    let mut hooks = Vec::new();
    for key in keys {
        let Some(config) = store.get(&gr, &key) else {
            continue;
        };
        let name = crate::meta::name(&config).to_string();
        for hook in config
            .get("webhooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = hooks.len();
            hooks.push(Hook::from_json(&name, index, hook));
        }
    }
    hooks
}
