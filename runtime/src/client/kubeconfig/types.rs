//! The kubeconfig file format, version `v1` (client-go's `tools/clientcmd/api/v1/types.go`):
//! named lists of clusters, users and contexts, and the current context.
//!
//! Field names are the file's (`certificate-authority-data`, `tokenFile`, `as-groups`, …);
//! fields kubegen does not know are ignored. Optional strings are `Option`s: an empty string
//! in the file reads as `Some("")` and the loader treats it as unset, as Go does. Tokens,
//! passwords, private keys and auth-provider settings are [`SecretString`]s: `Debug` never
//! shows them.

use std::{collections::BTreeMap, fmt, path::PathBuf};

use secrecy::SecretString;
use serde::{Deserialize, Deserializer};

/// A kubeconfig file (client-go's `clientcmdapi/v1.Config`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Kubeconfig {
    /// `Config` (or absent).
    pub kind: Option<String>,
    /// `v1` (or absent).
    #[serde(rename = "apiVersion")]
    pub api_version: Option<String>,
    /// Preferences for kubectl (read, not used).
    pub preferences: Option<Preferences>,
    /// The clusters, by name (`clusters`).
    pub clusters: Vec<NamedCluster>,
    /// The users, by name (`users`; client-go calls them auth infos).
    #[serde(rename = "users")]
    pub auth_infos: Vec<NamedAuthInfo>,
    /// The contexts, by name (`contexts`).
    pub contexts: Vec<NamedContext>,
    /// The context used when none is chosen (`current-context`).
    pub current_context: Option<String>,
    /// Extensions (read, not used).
    pub extensions: Vec<NamedExtension>,
}

/// kubectl's preferences (`preferences`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Preferences {
    /// Colored output.
    pub colors: Option<bool>,
    /// Extensions.
    pub extensions: Vec<NamedExtension>,
}

/// An extension: a name and any value (`runtime.RawExtension` in client-go).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct NamedExtension {
    /// The extension's name.
    pub name: String,
    /// Its value, as JSON.
    pub extension: serde_json::Value,
}

/// A cluster and its name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct NamedCluster {
    /// The name contexts refer to.
    pub name: String,
    /// The cluster.
    pub cluster: Cluster,
}

/// Where an API server is and how to trust it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Cluster {
    /// The API server's URL, e.g. `https://10.0.0.1:6443`.
    pub server: Option<String>,
    /// The name to verify the server's certificate against instead of the URL's host.
    pub tls_server_name: Option<String>,
    /// Do not verify the server's certificate.
    pub insecure_skip_tls_verify: bool,
    /// A PEM file of CA certificates (relative paths are resolved against the kubeconfig's
    /// directory when it is read from a file).
    pub certificate_authority: Option<PathBuf>,
    /// PEM CA certificates, base64 (overrides `certificate-authority`).
    pub certificate_authority_data: Option<String>,
    /// An HTTP(S) proxy for every request to this cluster.
    pub proxy_url: Option<String>,
    /// Do not ask for compressed responses.
    pub disable_compression: bool,
    /// Extensions; `client.authentication.k8s.io/exec` is handed to exec plugins that ask
    /// for cluster information.
    pub extensions: Vec<NamedExtension>,
}

/// A user and its name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct NamedAuthInfo {
    /// The name contexts refer to.
    pub name: String,
    /// The user's credentials (`user`).
    #[serde(rename = "user")]
    pub auth_info: AuthInfo,
}

/// Who the client is: certificates, a token, basic auth, an auth provider or an exec
/// plugin, and whom to impersonate (client-go's `AuthInfo`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
#[non_exhaustive]
pub struct AuthInfo {
    /// A PEM client certificate file (relative: against the kubeconfig's directory).
    pub client_certificate: Option<PathBuf>,
    /// A PEM client certificate, base64 (overrides `client-certificate`).
    pub client_certificate_data: Option<String>,
    /// A PEM private key file (relative: against the kubeconfig's directory).
    pub client_key: Option<PathBuf>,
    /// A PEM private key, base64 (overrides `client-key`).
    #[serde(deserialize_with = "secret")]
    pub client_key_data: Option<SecretString>,
    /// A bearer token.
    #[serde(deserialize_with = "secret")]
    pub token: Option<SecretString>,
    /// A file holding a bearer token, re-read when it changes (`tokenFile`).
    #[serde(rename = "tokenFile")]
    pub token_file: Option<PathBuf>,
    /// The user to impersonate (`as`).
    #[serde(rename = "as")]
    pub impersonate: Option<String>,
    /// The UID to impersonate (`as-uid`).
    #[serde(rename = "as-uid")]
    pub impersonate_uid: Option<String>,
    /// The groups to impersonate (`as-groups`).
    #[serde(rename = "as-groups")]
    pub impersonate_groups: Vec<String>,
    /// Extra fields of the impersonated user (`as-user-extra`).
    #[serde(rename = "as-user-extra")]
    pub impersonate_user_extra: BTreeMap<String, Vec<String>>,
    /// The basic-auth user name.
    pub username: Option<String>,
    /// The basic-auth password.
    #[serde(deserialize_with = "secret")]
    pub password: Option<SecretString>,
    /// A legacy auth provider (`oidc`, `gcp`, `azure`): kubegen sends its `id-token` or
    /// `access-token` and does not refresh it.
    pub auth_provider: Option<AuthProviderConfig>,
    /// An exec credential plugin.
    pub exec: Option<ExecConfig>,
    /// Extensions.
    pub extensions: Vec<NamedExtension>,
}

/// A legacy auth provider and its settings (client-go's `AuthProviderConfig`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct AuthProviderConfig {
    /// The provider (`oidc`, `gcp`, `azure`, …).
    pub name: String,
    /// Its settings; they hold tokens and client secrets, so every value is secret.
    #[serde(deserialize_with = "secret_map")]
    pub config: BTreeMap<String, SecretString>,
}

/// An exec credential plugin (client-go's `ExecConfig`).
#[derive(Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecConfig {
    /// The program; when it holds a path separator and is relative, it is resolved against
    /// the kubeconfig's directory, else it is looked up in `PATH`.
    pub command: String,
    /// Its arguments (may hold secrets: `Debug` shows only their number).
    pub args: Vec<String>,
    /// Extra environment variables (values may be secret: `Debug` shows only names).
    pub env: Vec<ExecEnvVar>,
    /// The `ExecCredential` version the plugin speaks, e.g.
    /// `client.authentication.k8s.io/v1`.
    pub api_version: Option<String>,
    /// Shown when the command cannot be found.
    pub install_hint: Option<String>,
    /// Pass the cluster's details to the plugin in `KUBERNETES_EXEC_INFO`.
    pub provide_cluster_info: bool,
    /// Whether the plugin may use standard input.
    pub interactive_mode: Option<ExecInteractiveMode>,
}

impl fmt::Debug for ExecConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecConfig")
            .field("command", &self.command)
            .field("args", &format_args!("[{} args]", self.args.len()))
            .field(
                "env",
                &self.env.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            )
            .field("api_version", &self.api_version)
            .field("install_hint", &self.install_hint)
            .field("provide_cluster_info", &self.provide_cluster_info)
            .field("interactive_mode", &self.interactive_mode)
            .finish()
    }
}

/// An environment variable for an exec plugin.
#[derive(Clone, Default, Deserialize)]
#[serde(default)]
pub struct ExecEnvVar {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: String,
}

impl fmt::Debug for ExecEnvVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecEnvVar")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// Whether an exec plugin may read standard input (`interactiveMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ExecInteractiveMode {
    /// Never.
    Never,
    /// When standard input is a terminal.
    IfAvailable,
    /// Always: the plugin needs a terminal.
    Always,
}

/// A context and its name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct NamedContext {
    /// The name `current-context` and `--context` refer to.
    pub name: String,
    /// The context.
    pub context: Context,
}

/// A cluster, a user and a default namespace, by name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Context {
    /// The cluster's name.
    pub cluster: String,
    /// The user's name (`user`).
    pub user: String,
    /// The default namespace.
    pub namespace: Option<String>,
    /// Extensions.
    pub extensions: Vec<NamedExtension>,
}

fn secret<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SecretString>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(SecretString::from))
}

fn secret_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, SecretString>, D::Error> {
    Ok(BTreeMap::<String, Option<String>>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| (k, SecretString::from(v.unwrap_or_default())))
        .collect())
}
