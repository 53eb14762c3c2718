//! Webhook markers → `MutatingWebhookConfiguration` / `ValidatingWebhookConfiguration`
//! manifests (controller-gen's `webhook` generator, `sigs.k8s.io/controller-tools/pkg/webhook`),
//! so an operator's admission webhooks are declared beside their handlers:
//!
//! ```text
//! // +kubebuilder:webhook:path=/validate-example-com-v1-widget,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.com,resources=widgets,verbs=create;update,versions=v1,name=vwidget-v1.kb.io,admissionReviewVersions=v1
//! ```
//!
//! * [`WebhookMarker::from_args`]: one marker's arguments, controller-gen's keys: `path`
//!   (or `url`), `mutating`, `failurePolicy` (`Fail` | `Ignore`, any case), `sideEffects`
//!   (`None` | `NoneOnDryRun`; `Some` and `Unknown` are refused as
//!   `admissionregistration.k8s.io/v1` refuses them), `groups`, `resources`, `verbs`
//!   (`create;update;delete;connect` or `*` → `operations`), `versions`, `name`,
//!   `admissionReviewVersions`, `matchPolicy` (`Exact` | `Equivalent`), `timeoutSeconds`
//!   (1 to 30), `reinvocationPolicy` (`Never` | `IfNeeded`, mutating webhooks only),
//!   `webhookVersions` (only `v1`), and `serviceName`, `serviceNamespace`, `servicePort`.
//!   Lists are `;`-separated; `core` is the core group `""`. What controller-gen passes
//!   through unchecked and kube-apiserver would refuse (an unknown verb or failure policy,
//!   a webhook name that is not a three-segment domain) is an error here.
//! * [`configurations`]: the two configurations, controller-gen's names
//!   (`mutating-webhook-configuration`, `validating-webhook-configuration`), each webhook
//!   calling `service {name: webhook-service, namespace: system, path}`, webhooks sorted
//!   by name (stably: markers of one name keep their order), mutating first; two webhooks
//!   of one name in one configuration are an error (kube-apiserver refuses them).
//! * `+kubebuilder:webhook:conversion` on a kind (any of its versions): its multi-version
//!   CRD converts through the operator's conversion webhook ([`crd_conversion`], added by
//!   the `crd` generator when the versions merge).
//! * `files` (feature `files`): the CLI's `webhook` command: every marker in the `.rs`
//!   files of a directory, `update` / `verify` of `config/webhook/manifests.yaml`.

#[cfg(feature = "files")]
pub mod files;

use serde_json::{Map, Value, json};
use thiserror::Error;

/// The Service every generated webhook calls (kubebuilder's `config/webhook/service.yaml`).
pub const SERVICE_NAME: &str = "webhook-service";
/// The Service's namespace (kustomize replaces it with the operator's).
pub const SERVICE_NAMESPACE: &str = "system";
/// The MutatingWebhookConfiguration's name.
pub const MUTATING_CONFIGURATION: &str = "mutating-webhook-configuration";
/// The ValidatingWebhookConfiguration's name.
pub const VALIDATING_CONFIGURATION: &str = "validating-webhook-configuration";
/// The path of the conversion webhook (controller-runtime serves conversion there).
pub const CONVERSION_PATH: &str = "/convert";

/// What is wrong with a webhook marker.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum MarkerError {
    /// A key controller-gen's marker does not have.
    #[error(
        "unknown argument `{0}` (expected path, url, mutating, failurePolicy, sideEffects, groups, resources, verbs, versions, name, admissionReviewVersions, matchPolicy, timeoutSeconds, reinvocationPolicy, webhookVersions, serviceName, serviceNamespace, servicePort)"
    )]
    UnknownArgument(String),
    /// A key given twice.
    #[error("`{0}` is given twice")]
    Duplicate(String),
    /// A required key is missing.
    #[error("needs `{0}=...`")]
    Missing(&'static str),
    /// A value outside the key's allowed values.
    #[error("`{key}={value}`: expected {expected}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        expected: &'static str,
    },
    /// Both or neither of `path` and `url`.
    #[error("needs exactly one of `path=...` and `url=...`")]
    PathOrUrl,
    /// `reinvocationPolicy` on a validating webhook.
    #[error("`reinvocationPolicy` applies to mutating webhooks only (`mutating=true`)")]
    ReinvocationOnValidating,
    /// The marker's syntax is broken.
    #[error("{0}")]
    Syntax(String),
}

/// Where the API server sends the review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A Service of the cluster (`clientConfig.service`).
    Service {
        /// The Service's name.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The URL path.
        path: String,
        /// The Service port (`None`: 443).
        port: Option<i32>,
    },
    /// A URL (`clientConfig.url`).
    Url(String),
}

/// One `+kubebuilder:webhook` marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookMarker {
    /// A mutating webhook (else validating).
    pub mutating: bool,
    /// `Fail` or `Ignore`.
    pub failure_policy: String,
    /// `Exact` or `Equivalent` (`None`: the API server's default, `Equivalent`).
    pub match_policy: Option<String>,
    /// `None` or `NoneOnDryRun`.
    pub side_effects: String,
    /// 1 to 30 (`None`: the API server's default, 10).
    pub timeout_seconds: Option<i32>,
    /// API groups (`""` is the core group).
    pub groups: Vec<String>,
    /// Resources (`widgets`, `widgets/status`, `*`).
    pub resources: Vec<String>,
    /// Operations (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`, `*`).
    pub operations: Vec<String>,
    /// API versions.
    pub versions: Vec<String>,
    /// The webhook's name (a domain of three or more segments).
    pub name: String,
    /// Where the API server calls it.
    pub target: Target,
    /// AdmissionReview versions, in preference order.
    pub admission_review_versions: Vec<String>,
    /// `Never` or `IfNeeded` (mutating only).
    pub reinvocation_policy: Option<String>,
}

/// A marker list value: `a;b;c` (controller-gen also accepts `{a,b,c}`).
fn list(v: &str) -> Vec<String> {
    let v = v.trim();
    let inner = v
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or(v);
    inner
        .split([';', ','])
        .map(|s| s.trim().trim_matches('"').to_owned())
        .collect()
}

fn non_empty(key: &'static str, v: &str) -> Result<Vec<String>, MarkerError> {
    let items = list(v);
    if items.iter().any(String::is_empty) {
        return Err(MarkerError::Invalid {
            key,
            value: v.to_owned(),
            expected: "a `;`-separated list without empty items",
        });
    }
    Ok(items)
}

/// `value` as one of `allowed` (case-insensitively, as controller-gen reads them),
/// spelled as the API spells it.
fn one_of(
    key: &'static str,
    value: &str,
    allowed: &'static [&'static str],
    expected: &'static str,
) -> Result<String, MarkerError> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value.trim()))
        .map(|a| (*a).to_owned())
        .ok_or_else(|| MarkerError::Invalid {
            key,
            value: value.to_owned(),
            expected,
        })
}

/// kube-apiserver's rule for webhook names: a DNS subdomain of at least three labels.
fn valid_name(name: &str) -> bool {
    let labels: Vec<&str> = name.split('.').collect();
    name.len() <= 253
        && labels.len() >= 3
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

impl WebhookMarker {
    /// Reads a marker's `key=value` arguments.
    pub fn from_args(args: &[(String, String)]) -> Result<Self, MarkerError> {
        let mut seen = std::collections::BTreeSet::new();
        for (k, _) in args {
            if !seen.insert(k.as_str()) {
                return Err(MarkerError::Duplicate(k.clone()));
            }
        }
        let get = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        for (k, _) in args {
            if !matches!(
                k.as_str(),
                "path"
                    | "url"
                    | "mutating"
                    | "failurePolicy"
                    | "sideEffects"
                    | "groups"
                    | "resources"
                    | "verbs"
                    | "versions"
                    | "name"
                    | "admissionReviewVersions"
                    | "matchPolicy"
                    | "timeoutSeconds"
                    | "reinvocationPolicy"
                    | "webhookVersions"
                    | "serviceName"
                    | "serviceNamespace"
                    | "servicePort"
            ) {
                return Err(MarkerError::UnknownArgument(k.clone()));
            }
        }
        let required = |key: &'static str| get(key).ok_or(MarkerError::Missing(key));
        let mutating = match required("mutating")?.trim() {
            "true" => true,
            "false" => false,
            other => {
                return Err(MarkerError::Invalid {
                    key: "mutating",
                    value: other.to_owned(),
                    expected: "true or false",
                });
            }
        };
        let failure_policy = one_of(
            "failurePolicy",
            required("failurePolicy")?,
            &["Fail", "Ignore"],
            "Fail or Ignore",
        )?;
        let side_effects = required("sideEffects")?;
        let side_effects = one_of(
            "sideEffects",
            side_effects,
            &["None", "NoneOnDryRun"],
            "None or NoneOnDryRun (admissionregistration.k8s.io/v1 refuses Some and Unknown)",
        )?;
        let match_policy = get("matchPolicy")
            .map(|v| {
                one_of(
                    "matchPolicy",
                    v,
                    &["Exact", "Equivalent"],
                    "Exact or Equivalent",
                )
            })
            .transpose()?;
        let reinvocation_policy = get("reinvocationPolicy")
            .map(|v| {
                one_of(
                    "reinvocationPolicy",
                    v,
                    &["Never", "IfNeeded"],
                    "Never or IfNeeded",
                )
            })
            .transpose()?;
        if reinvocation_policy.is_some() && !mutating {
            return Err(MarkerError::ReinvocationOnValidating);
        }
        let timeout_seconds = get("timeoutSeconds")
            .map(|v| match v.trim().parse::<i32>() {
                Ok(t) if (1..=30).contains(&t) => Ok(t),
                _ => Err(MarkerError::Invalid {
                    key: "timeoutSeconds",
                    value: v.to_owned(),
                    expected: "an integer from 1 to 30",
                }),
            })
            .transpose()?;
        if let Some(v) = get("webhookVersions")
            && list(v).iter().any(|w| w != "v1")
        {
            return Err(MarkerError::Invalid {
                key: "webhookVersions",
                value: v.to_owned(),
                expected: "v1 (the only admissionregistration version generated)",
            });
        }
        let mut groups = list(required("groups")?);
        for g in &mut groups {
            if g == "core" {
                g.clear();
            }
        }
        let resources = non_empty("resources", required("resources")?)?;
        let versions = non_empty("versions", required("versions")?)?;
        let verbs = non_empty("verbs", required("verbs")?)?;
        let operations = verbs
            .iter()
            .map(|v| {
                one_of(
                    "verbs",
                    v,
                    &["CREATE", "UPDATE", "DELETE", "CONNECT", "*"],
                    "create, update, delete, connect or *",
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let name = required("name")?.trim().to_owned();
        if !valid_name(&name) {
            return Err(MarkerError::Invalid {
                key: "name",
                value: name,
                expected: "a lower-case domain of at least three labels (`vwidget-v1.kb.io`)",
            });
        }
        let admission_review_versions = non_empty(
            "admissionReviewVersions",
            required("admissionReviewVersions")?,
        )?;
        for v in &admission_review_versions {
            if v != "v1" && v != "v1beta1" {
                return Err(MarkerError::Invalid {
                    key: "admissionReviewVersions",
                    value: v.clone(),
                    expected: "v1 and/or v1beta1",
                });
            }
        }
        let target = match (get("path"), get("url")) {
            (Some(path), None) => {
                if !path.starts_with('/') {
                    return Err(MarkerError::Invalid {
                        key: "path",
                        value: path.to_owned(),
                        expected: "a path starting with `/`",
                    });
                }
                let port = get("servicePort")
                    .map(|p| match p.trim().parse::<i32>() {
                        Ok(n) if (1..=65535).contains(&n) => Ok(n),
                        _ => Err(MarkerError::Invalid {
                            key: "servicePort",
                            value: p.to_owned(),
                            expected: "a port from 1 to 65535",
                        }),
                    })
                    .transpose()?;
                Target::Service {
                    name: get("serviceName").unwrap_or(SERVICE_NAME).to_owned(),
                    namespace: get("serviceNamespace")
                        .unwrap_or(SERVICE_NAMESPACE)
                        .to_owned(),
                    path: path.to_owned(),
                    port,
                }
            }
            (None, Some(url)) => {
                if !url.starts_with("https://") {
                    return Err(MarkerError::Invalid {
                        key: "url",
                        value: url.to_owned(),
                        expected: "an https:// URL",
                    });
                }
                for key in ["serviceName", "serviceNamespace", "servicePort"] {
                    if get(key).is_some() {
                        return Err(MarkerError::Invalid {
                            key: "url",
                            value: url.to_owned(),
                            expected: "no serviceName, serviceNamespace or servicePort beside it",
                        });
                    }
                }
                Target::Url(url.to_owned())
            }
            _ => return Err(MarkerError::PathOrUrl),
        };
        Ok(Self {
            mutating,
            failure_policy,
            match_policy,
            side_effects,
            timeout_seconds,
            groups,
            resources,
            operations,
            versions,
            name,
            target,
            admission_review_versions,
            reinvocation_policy,
        })
    }

    /// The webhook as `admissionregistration.k8s.io/v1` JSON (keys sorted, unset
    /// optional fields left out, as controller-gen writes it).
    pub fn to_json(&self) -> Value {
        let client_config = match &self.target {
            Target::Service {
                name,
                namespace,
                path,
                port,
            } => {
                let mut service = json!({"name": name, "namespace": namespace, "path": path});
                if let Some(port) = port {
                    service["port"] = json!(port);
                }
                json!({ "service": service })
            }
            Target::Url(url) => json!({ "url": url }),
        };
        let mut m = Map::new();
        m.insert(
            "admissionReviewVersions".into(),
            json!(self.admission_review_versions),
        );
        m.insert("clientConfig".into(), client_config);
        m.insert("failurePolicy".into(), json!(self.failure_policy));
        if let Some(p) = &self.match_policy {
            m.insert("matchPolicy".into(), json!(p));
        }
        m.insert("name".into(), json!(self.name));
        if let Some(p) = &self.reinvocation_policy {
            m.insert("reinvocationPolicy".into(), json!(p));
        }
        m.insert(
            "rules".into(),
            json!([{
                "apiGroups": self.groups,
                "apiVersions": self.versions,
                "operations": self.operations,
                "resources": self.resources,
            }]),
        );
        m.insert("sideEffects".into(), json!(self.side_effects));
        if let Some(t) = self.timeout_seconds {
            m.insert("timeoutSeconds".into(), json!(t));
        }
        Value::Object(m)
    }
}

/// The configurations of `markers`: a MutatingWebhookConfiguration when any marker is
/// mutating, then a ValidatingWebhookConfiguration when any is validating; webhooks
/// sorted by name, stably. `Err` names a webhook name used twice in one configuration.
pub fn configurations(markers: &[WebhookMarker]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for (mutating, kind, name) in [
        (true, "MutatingWebhookConfiguration", MUTATING_CONFIGURATION),
        (
            false,
            "ValidatingWebhookConfiguration",
            VALIDATING_CONFIGURATION,
        ),
    ] {
        let mut hooks: Vec<&WebhookMarker> =
            markers.iter().filter(|m| m.mutating == mutating).collect();
        if hooks.is_empty() {
            continue;
        }
        hooks.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(w) = hooks.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(format!(
                "two webhooks named `{}` in the {kind} (kube-apiserver refuses duplicate names)",
                w[0].name
            ));
        }
        out.push(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": hooks.iter().map(|h| h.to_json()).collect::<Vec<_>>(),
        }));
    }
    Ok(out)
}

/// The `spec.conversion` a multi-version CRD gets from `+kubebuilder:webhook:conversion`
/// (kubegen's marker on the kind; the hub is the `+kubebuilder:storageversion`): kubebuilder's
/// `config/crd/patches/webhook_in_<plural>.yaml`, as part of the CRD.
pub fn crd_conversion() -> Value {
    json!({
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": SERVICE_NAME,
                    "namespace": SERVICE_NAMESPACE,
                    "path": CONVERSION_PATH,
                },
            },
            "conversionReviewVersions": ["v1"],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(args: &str) -> Result<WebhookMarker, MarkerError> {
        let args = crate::markers::value::split_args(args).map_err(MarkerError::Syntax)?;
        WebhookMarker::from_args(&args)
    }

    const VALIDATING: &str = "path=/validate-example-com-v1-widget,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.com,resources=widgets,verbs=create;update,versions=v1,name=vwidget-v1.kb.io,admissionReviewVersions=v1";

    #[test]
    fn a_kubebuilder_marker_becomes_controller_gens_webhook() {
        let hook = marker(VALIDATING).expect("marker");
        assert_eq!(
            hook.to_json(),
            json!({
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"service": {
                    "name": "webhook-service",
                    "namespace": "system",
                    "path": "/validate-example-com-v1-widget",
                }},
                "failurePolicy": "Fail",
                "name": "vwidget-v1.kb.io",
                "rules": [{
                    "apiGroups": ["example.com"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["widgets"],
                }],
                "sideEffects": "None",
            })
        );
    }

    #[test]
    fn optional_keys_and_core_group() {
        let hook = marker(
            "url=\"https://hooks.example.com:8443/mutate\",mutating=true,failurePolicy=Ignore,sideEffects=NoneOnDryRun,groups=core,resources=pods,verbs=*,versions=v1,name=mpod.example.com,admissionReviewVersions=v1;v1beta1,matchPolicy=exact,timeoutSeconds=5,reinvocationPolicy=IfNeeded,webhookVersions=v1",
        )
        .expect("marker");
        let v = hook.to_json();
        assert_eq!(
            v["clientConfig"],
            json!({"url": "https://hooks.example.com:8443/mutate"})
        );
        assert_eq!(v["rules"][0]["apiGroups"], json!([""]));
        assert_eq!(v["rules"][0]["operations"], json!(["*"]));
        assert_eq!(v["matchPolicy"], "Exact");
        assert_eq!(v["timeoutSeconds"], 5);
        assert_eq!(v["reinvocationPolicy"], "IfNeeded");
        assert_eq!(v["sideEffects"], "NoneOnDryRun");
    }

    #[test]
    fn malformed_markers_say_what_is_wrong() {
        let with = |from: &str, to: &str| marker(&VALIDATING.replace(from, to)).expect_err(to);
        assert_eq!(
            with("sideEffects=None", "sideEffects=Some").to_string(),
            "`sideEffects=Some`: expected None or NoneOnDryRun (admissionregistration.k8s.io/v1 refuses Some and Unknown)"
        );
        assert!(matches!(
            with(",sideEffects=None", ""),
            MarkerError::Missing("sideEffects")
        ));
        assert!(
            with("verbs=create;update", "verbs=create;get")
                .to_string()
                .contains("`verbs=get`")
        );
        assert!(
            with("failurePolicy=fail", "failurePolicy=maybe")
                .to_string()
                .contains("Fail or Ignore")
        );
        assert!(matches!(
            with("name=vwidget-v1.kb.io", "name=vwidget"),
            MarkerError::Invalid { key: "name", .. }
        ));
        assert!(matches!(
            with("path=/validate-example-com-v1-widget,", ""),
            MarkerError::PathOrUrl
        ));
        assert!(matches!(
            with("versions=v1", "versions=v1,verbs=delete"),
            MarkerError::Duplicate(k) if k == "verbs"
        ));
        assert!(matches!(with("name=", "nmae="), MarkerError::UnknownArgument(k) if k == "nmae"));
        assert!(
            with("versions=v1", "versions=v1,timeoutSeconds=31")
                .to_string()
                .contains("1 to 30")
        );
        assert!(matches!(
            with("versions=v1", "versions=v1,reinvocationPolicy=IfNeeded"),
            MarkerError::ReinvocationOnValidating
        ));
        assert!(
            with("versions=v1", "versions=v1,webhookVersions=v1beta1")
                .to_string()
                .contains("webhookVersions")
        );
    }

    #[test]
    fn configurations_are_mutating_then_validating_sorted_by_name() {
        let b = marker(&VALIDATING.replace("name=vwidget", "name=b-vwidget")).expect("b");
        let a = marker(&VALIDATING.replace("name=vwidget", "name=a-vwidget")).expect("a");
        let m = marker(&VALIDATING.replace("mutating=false", "mutating=true")).expect("m");
        let configs = configurations(&[b.clone(), a, m]).expect("configs");
        assert_eq!(configs.len(), 2);
        assert_eq!(configs[0]["metadata"]["name"], MUTATING_CONFIGURATION);
        assert_eq!(configs[1]["metadata"]["name"], VALIDATING_CONFIGURATION);
        assert_eq!(configs[1]["webhooks"][0]["name"], "a-vwidget-v1.kb.io");
        let err = configurations(&[b.clone(), b]).expect_err("duplicate");
        assert!(err.contains("b-vwidget-v1.kb.io"), "{err}");
    }
}
