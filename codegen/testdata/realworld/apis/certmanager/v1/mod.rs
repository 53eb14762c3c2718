//! cert-manager.io/v1, shaped after cert-manager's `Certificate`
//! (`codegen/testdata/crds/cert-manager.io_certificates.yaml`).
//!
//! +groupName=cert-manager.io
//! +k8s:deepcopy-gen=package

use std::collections::BTreeMap;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::LocalObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

#[rustfmt::skip]
mod zz_generated_deepcopy;
#[rustfmt::skip]
mod zz_generated_resource;

/// A request for an X.509 certificate, kept signed and stored in the Secret named in
/// `spec.secretName`.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: CertificateSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CertificateStatus>,
}

/// The desired certificate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateSpec {
    /// The Secret the signed certificate is stored in.
    pub secret_name: String,
    /// Labels and annotations copied onto that Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_template: Option<CertificateSecretTemplate>,
    /// The common name (discouraged; use `dns_names`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_name: Option<String>,
    /// DNS subject alternative names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dns_names: Vec<String>,
    /// IP subject alternative names: a type of another crate (std) with `Clone` only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<IpAddr>,
    /// Requested lifetime (a Go duration: `2160h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// How long before expiry to renew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_before: Option<Duration>,
    /// The issuer to obtain the certificate from.
    pub issuer_ref: IssuerReference,
    /// Private key options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key: Option<CertificatePrivateKey>,
    /// Key usages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usages: Vec<KeyUsage>,
    /// Whether the certificate is a CA.
    #[serde(default, rename = "isCA", skip_serializing_if = "Option::is_none")]
    pub is_ca: Option<bool>,
    /// Extra keystores written into the Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keystores: Option<CertificateKeystores>,
    /// How many CertificateRequest revisions to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
}

/// A Go duration string (`90m`, `2160h`): a newtype with `Clone` only, opted out of the
/// package's deepcopy, still usable as a field of deep-copied types.
///
/// +k8s:deepcopy-gen=false
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Duration(pub String);

/// Labels and annotations for the certificate's Secret.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CertificateSecretTemplate {
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// A reference to an Issuer or ClusterIssuer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IssuerReference {
    /// Name of the issuer.
    pub name: String,
    /// `Issuer` (default) or `ClusterIssuer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// API group of the issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// Private key options.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificatePrivateKey {
    /// Key algorithm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<PrivateKeyAlgorithm>,
    /// Key size in bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// When to generate a new key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation_policy: Option<String>,
}

/// Private key algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PrivateKeyAlgorithm {
    /// RSA.
    #[serde(rename = "RSA")]
    Rsa,
    /// ECDSA.
    #[serde(rename = "ECDSA")]
    Ecdsa,
    /// Ed25519.
    Ed25519,
}

/// Key usages (a subset of cert-manager's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyUsage {
    /// `digital signature`.
    #[serde(rename = "digital signature")]
    DigitalSignature,
    /// `key encipherment`.
    #[serde(rename = "key encipherment")]
    KeyEncipherment,
    /// `server auth`.
    #[serde(rename = "server auth")]
    ServerAuth,
    /// `client auth`.
    #[serde(rename = "client auth")]
    ClientAuth,
}

/// Keystores written beside the PEM files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CertificateKeystores {
    /// A PKCS#12 keystore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pkcs12: Option<Pkcs12Keystore>,
}

/// A PKCS#12 keystore.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pkcs12Keystore {
    /// Whether to create it.
    pub create: bool,
    /// The Secret key holding its password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret_ref: Option<SecretKeySelector>,
}

/// cert-manager's SecretKeySelector: a LocalObjectReference plus a key, as in Go (the
/// embedded struct is flattened).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecretKeySelector {
    /// The Secret.
    #[serde(flatten)]
    pub local_object_reference: LocalObjectReference,
    /// The key within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The observed certificate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateStatus {
    /// Conditions (`Ready`, `Issuing`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<CertificateCondition>,
    /// Expiry of the stored certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_after: Option<Time>,
    /// Start of validity of the stored certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<Time>,
    /// When the certificate will be renewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renewal_time: Option<Time>,
    /// The current revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i32>,
}

/// A condition of a Certificate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateCondition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
