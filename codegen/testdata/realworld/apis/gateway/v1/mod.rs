//! gateway.networking.k8s.io/v1, shaped after Gateway API's `Gateway`
//! (`codegen/testdata/crds/gateway.networking.k8s.io_gateways.yaml`).
//!
//! +groupName=gateway.networking.k8s.io
//! +k8s:deepcopy-gen=package

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

/// An instance of a service-traffic handling infrastructure: listeners bound to
/// addresses.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gateway {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: GatewaySpec,
    /// Observed state (the server defaults it on create).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GatewayStatus>,
}

/// The desired Gateway.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpec {
    /// The GatewayClass this Gateway uses.
    pub gateway_class_name: String,
    /// Logical endpoints bound to addresses.
    pub listeners: Vec<Listener>,
    /// Requested addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<GatewaySpecAddress>,
    /// Infrastructure labels, annotations and parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure: Option<GatewayInfrastructure>,
}

/// A listener.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listener {
    /// Unique name.
    pub name: String,
    /// Host name to match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Network port.
    pub port: i32,
    /// `HTTP`, `HTTPS`, `TLS`, `TCP`, `UDP`.
    pub protocol: String,
    /// TLS configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<GatewayTlsConfig>,
    /// Routes that may attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_routes: Option<AllowedRoutes>,
}

/// TLS configuration of a listener.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayTlsConfig {
    /// `Terminate` or `Passthrough`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<TlsModeType>,
    /// Certificates (Secrets) to serve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificate_refs: Vec<SecretObjectReference>,
    /// Implementation-specific options.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
}

/// TLS modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TlsModeType {
    /// TLS terminates at the Gateway.
    #[default]
    Terminate,
    /// TLS passes through to the backend.
    Passthrough,
}

/// A reference to a Secret, possibly in another namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecretObjectReference {
    /// API group (`""`: core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind (`Secret`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name.
    pub name: String,
    /// Namespace (the Gateway's when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Which routes may attach to a listener.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AllowedRoutes {
    /// Namespaces routes may come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<RouteNamespaces>,
    /// Route kinds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<RouteGroupKind>,
}

/// Namespaces routes may come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteNamespaces {
    /// `All`, `Selector` or `Same`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// With `from: Selector`: which namespaces (a k8s-openapi type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// A route group and kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteGroupKind {
    /// Group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind.
    pub kind: String,
}

/// A requested address.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GatewaySpecAddress {
    /// `IPAddress`, `Hostname` or implementation-specific.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// Infrastructure metadata.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayInfrastructure {
    /// Labels for generated resources.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations for generated resources.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The observed Gateway.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GatewayStatus {
    /// Bound addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<GatewayStatusAddress>,
    /// `Accepted`, `Programmed` (metav1.Condition, a k8s-openapi type).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Per-listener status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<ListenerStatus>,
}

/// A bound address.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GatewayStatusAddress {
    /// Address type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The address.
    pub value: String,
}

/// Status of one listener.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerStatus {
    /// The listener's name.
    pub name: String,
    /// Route kinds it supports.
    #[serde(default)]
    pub supported_kinds: Vec<RouteGroupKind>,
    /// How many routes attached.
    pub attached_routes: i32,
    /// Its conditions.
    pub conditions: Vec<Condition>,
}
