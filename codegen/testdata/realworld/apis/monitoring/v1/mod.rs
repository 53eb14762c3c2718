//! monitoring.coreos.com/v1, shaped after the Prometheus Operator's `ServiceMonitor`
//! (`codegen/testdata/crds/monitoring.coreos.com_servicemonitors.yaml`).
//!
//! +groupName=monitoring.coreos.com
//! +k8s:deepcopy-gen=package

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMapKeySelector, SecretKeySelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

/// How a set of Services is scraped by Prometheus. No status subresource is used here.
///
/// +genclient
/// +genclient:noStatus
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceMonitor {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: ServiceMonitorSpec,
}

/// What to scrape and how.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceMonitorSpec {
    /// Label whose value becomes the job name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_label: Option<String>,
    /// Service labels copied onto targets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_labels: Vec<String>,
    /// Endpoints to scrape.
    pub endpoints: Vec<Endpoint>,
    /// Which Services (a k8s-openapi type).
    pub selector: LabelSelector,
    /// Which namespaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<NamespaceSelector>,
    /// Per-scrape sample limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_limit: Option<i64>,
    /// `nativeHistogramMinBucketFactor`: an int-or-string quantity in the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_histogram_min_bucket_factor: Option<IntOrString>,
}

/// A scraped endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// Named Service port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// Pod port, by number or name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<IntOrString>,
    /// HTTP path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `http` or `https`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// URL parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Vec<String>>,
    /// Scrape interval (`30s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Bearer token Secret (a k8s-openapi type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_secret: Option<SecretKeySelector>,
    /// TLS configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<TlsConfig>,
    /// Basic authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuth>,
    /// Relabelings before scraping.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relabelings: Vec<RelabelConfig>,
    /// Relabelings of ingested samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metric_relabelings: Vec<RelabelConfig>,
    /// Keep the target's labels on conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub honor_labels: Option<bool>,
}

/// TLS configuration of a scrape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TlsConfig {
    /// CA certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<SecretOrConfigMap>,
    /// Client certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<SecretOrConfigMap>,
    /// Client key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_secret: Option<SecretKeySelector>,
    /// Server name for SNI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// Skip verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_skip_verify: Option<bool>,
}

/// Data from a Secret or a ConfigMap (k8s-openapi selectors).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretOrConfigMap {
    /// A Secret key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretKeySelector>,
    /// A ConfigMap key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ConfigMapKeySelector>,
}

/// Basic authentication credentials.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BasicAuth {
    /// The user name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<SecretKeySelector>,
    /// The password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<SecretKeySelector>,
}

/// A relabeling rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelabelConfig {
    /// Source labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_labels: Vec<String>,
    /// Separator between source values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    /// Target label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_label: Option<String>,
    /// Regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Replacement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// Action (`replace`, `keep`, `drop` ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// Which namespaces to look in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceSelector {
    /// Every namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any: Option<bool>,
    /// These namespaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_names: Vec<String>,
}
