//! Credentials and the `Authorization` header: static bearer tokens, token files re-read when
//! they change (bound service-account tokens rotate), basic auth, and exec credential plugins
//! (client-go's `plugin/pkg/client/auth/exec`), cached until their `expirationTimestamp` and run
//! again when the server answers 401.
//!
//! Nothing secret is ever formatted: the `Debug` impls here print `<redacted>`, header values
//! are marked sensitive, and exec plugin output and errors are never logged or copied into an
//! error message.

use std::{
    fmt,
    path::{Path, PathBuf},
    process::Stdio,
    time::SystemTime,
};

use base64::Engine as _;
use http::HeaderValue;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::kubeconfig::{self, EXEC_CLUSTER_EXTENSION, ExecConfig, KubeconfigError};

/// The default ExecCredential API version when the kubeconfig names none.
pub const EXEC_API_VERSION: &str = "client.authentication.k8s.io/v1beta1";

/// Why credentials could not be obtained.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The token file could not be read.
    #[error("reading token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The exec plugin failed or printed something that is not an ExecCredential.
    #[error("exec plugin {command}: {message}")]
    Exec {
        /// The plugin's command.
        command: String,
        /// What went wrong (never the plugin's output).
        message: String,
    },
    /// The credential cannot be put in an HTTP header.
    #[error("credential is not a valid header value")]
    InvalidHeader,
}

/// Where the client's identity comes from (TLS client certificates are configured separately,
/// in [`TlsConfig`](super::config::TlsConfig)).
#[derive(Clone, Default)]
pub enum Credentials {
    /// No `Authorization` header.
    #[default]
    None,
    /// A static bearer token.
    Bearer(SecretString),
    /// A bearer token read from a file, re-read whenever the file changes.
    TokenFile(PathBuf),
    /// HTTP basic auth.
    Basic {
        /// The user name.
        username: String,
        /// The password.
        password: SecretString,
    },
    /// An exec credential plugin.
    Exec(Box<ExecPlugin>),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::None => f.write_str("None"),
            Credentials::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            Credentials::TokenFile(p) => f.debug_tuple("TokenFile").field(p).finish(),
            Credentials::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
            Credentials::Exec(e) => f.debug_tuple("Exec").field(e).finish(),
        }
    }
}

/// An exec credential plugin: the command, its arguments and environment, and the
/// `ExecCredential` API version it speaks.
#[derive(Clone)]
pub struct ExecPlugin {
    /// The program to run.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables (values may be secret; never printed).
    pub env: Vec<(String, String)>,
    /// `client.authentication.k8s.io/v1` or `v1beta1`.
    pub api_version: String,
    /// Cluster information passed in `KUBERNETES_EXEC_INFO` when the kubeconfig asks for it.
    pub cluster: Option<ExecCluster>,
    /// Shown with the error when the command cannot be found (kubeconfig's `installHint`).
    pub install_hint: Option<String>,
}

/// The cluster as an exec plugin sees it in `KUBERNETES_EXEC_INFO`'s `spec.cluster` when
/// the kubeconfig sets `provideClusterInfo` (client-go's `clientauthentication` `Cluster`,
/// built as its `ConfigToExecCluster` does).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct ExecCluster {
    /// The API server's URL.
    pub server: String,
    /// The name the server's certificate is verified against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_server_name: Option<String>,
    /// The server's certificate is not verified.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_tls_verify: bool,
    /// The CA certificates (PEM), sent base64-encoded.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_base64"
    )]
    pub certificate_authority_data: Option<Vec<u8>>,
    /// The proxy for requests to the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
    /// Responses are not compressed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disable_compression: bool,
    /// The cluster's `client.authentication.k8s.io/exec` extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
}

fn serialize_base64<S: serde::Serializer>(data: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
    match data {
        Some(d) => s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(d)),
        None => s.serialize_none(),
    }
}

impl ExecCluster {
    /// The cluster information of a kubeconfig cluster (its CA read from
    /// `certificate-authority-data` or the `certificate-authority` file).
    pub fn from_kubeconfig(cluster: &kubeconfig::Cluster) -> Result<Self, KubeconfigError> {
        let nonempty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        Ok(Self {
            server: cluster.server.clone().unwrap_or_default(),
            tls_server_name: nonempty(&cluster.tls_server_name),
            insecure_skip_tls_verify: cluster.insecure_skip_tls_verify,
            certificate_authority_data: cluster.certificate_authority_pem()?,
            proxy_url: nonempty(&cluster.proxy_url),
            disable_compression: cluster.disable_compression,
            config: cluster.extension(EXEC_CLUSTER_EXTENSION).cloned(),
        })
    }
}

impl ExecPlugin {
    /// A plugin running `command` with no arguments.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            api_version: EXEC_API_VERSION.to_string(),
            cluster: None,
            install_hint: None,
        }
    }

    /// Adds arguments.
    pub fn with_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Takes the plugin settings from a kubeconfig `exec` block; `cluster` (the context's)
    /// is passed to the plugin when the block sets `provideClusterInfo`. Environment
    /// entries without a name are skipped.
    pub fn from_kubeconfig(
        exec: &ExecConfig,
        cluster: &kubeconfig::Cluster,
    ) -> Result<Self, AuthError> {
        if exec.command.is_empty() {
            return Err(AuthError::Exec {
                command: String::new(),
                message: "exec block has no command".into(),
            });
        }
        let cluster = if exec.provide_cluster_info {
            Some(
                ExecCluster::from_kubeconfig(cluster).map_err(|e| AuthError::Exec {
                    command: exec.command.clone(),
                    message: format!("cluster information: {e}"),
                })?,
            )
        } else {
            None
        };
        Ok(Self {
            command: exec.command.clone(),
            args: exec.args.clone(),
            env: exec
                .env
                .iter()
                .filter(|e| !e.name.is_empty())
                .map(|e| (e.name.clone(), e.value.clone()))
                .collect(),
            api_version: exec
                .api_version
                .clone()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| EXEC_API_VERSION.to_string()),
            cluster,
            install_hint: exec.install_hint.clone().filter(|h| !h.is_empty()),
        })
    }
}

impl fmt::Debug for ExecPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecPlugin")
            .field("command", &self.command)
            .field("args", &format_args!("[{} args]", self.args.len()))
            .field(
                "env",
                &self.env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            )
            .field("api_version", &self.api_version)
            .finish()
    }
}

/// What an exec plugin prints.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    #[serde(default)]
    status: Option<ExecCredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    expiration_timestamp: Option<String>,
    #[serde(default)]
    client_certificate_data: Option<String>,
}

struct CachedToken {
    token: SecretString,
    expires: Option<SystemTime>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    modified: Option<SystemTime>,
    len: u64,
}

/// Turns [`Credentials`] into `Authorization` headers, caching what is expensive to obtain.
pub struct Authenticator {
    credentials: Credentials,
    file_cache: parking_lot::Mutex<Option<(SecretString, FileStamp)>>,
    exec_cache: tokio::sync::Mutex<Option<CachedToken>>,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// An authenticator for `credentials`.
    pub fn new(credentials: Credentials) -> Self {
        Self {
            credentials,
            file_cache: parking_lot::Mutex::new(None),
            exec_cache: tokio::sync::Mutex::new(None),
        }
    }

    /// The configured credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The `Authorization` header for the next request (marked sensitive), if any.
    pub async fn header(&self) -> Result<Option<HeaderValue>, AuthError> {
        let value = match &self.credentials {
            Credentials::None => return Ok(None),
            Credentials::Bearer(t) => bearer(t.expose_secret())?,
            Credentials::TokenFile(path) => {
                let token = self.token_from_file(path).await?;
                bearer(token.expose_secret())?
            }
            Credentials::Basic { username, password } => {
                let raw = format!("{username}:{}", password.expose_secret());
                let enc = base64::engine::general_purpose::STANDARD.encode(raw);
                sensitive(&format!("Basic {enc}"))?
            }
            Credentials::Exec(plugin) => {
                let token = self.token_from_exec(plugin).await?;
                bearer(token.expose_secret())?
            }
        };
        Ok(Some(value))
    }

    /// Drops cached credentials after a 401; true when fetching them again may help, so the
    /// request is worth one more try.
    pub async fn invalidate(&self) -> bool {
        match &self.credentials {
            Credentials::TokenFile(_) => {
                *self.file_cache.lock() = None;
                true
            }
            Credentials::Exec(_) => {
                *self.exec_cache.lock().await = None;
                true
            }
            _ => false,
        }
    }

    async fn token_from_file(&self, path: &Path) -> Result<SecretString, AuthError> {
        let io_err = |source| AuthError::TokenFile {
            path: path.to_path_buf(),
            source,
        };
        let meta = tokio::fs::metadata(path).await.map_err(io_err)?;
        let stamp = FileStamp {
            modified: meta.modified().ok(),
            len: meta.len(),
        };
        if let Some((token, seen)) = &*self.file_cache.lock()
            && *seen == stamp
        {
            return Ok(token.clone());
        }
        let raw = tokio::fs::read_to_string(path).await.map_err(io_err)?;
        let token = SecretString::from(raw.trim().to_string());
        tracing::debug!(path = %path.display(), "read token file");
        *self.file_cache.lock() = Some((token.clone(), stamp));
        Ok(token)
    }

    async fn token_from_exec(&self, plugin: &ExecPlugin) -> Result<SecretString, AuthError> {
        let mut cache = self.exec_cache.lock().await;
        if let Some(c) = &*cache
            && c.expires.is_none_or(|e| SystemTime::now() < e)
        {
            return Ok(c.token.clone());
        }
        let fresh = run_exec(plugin).await?;
        let token = fresh.token.clone();
        *cache = Some(fresh);
        Ok(token)
    }
}

fn bearer(token: &str) -> Result<HeaderValue, AuthError> {
    sensitive(&format!("Bearer {token}"))
}

fn sensitive(v: &str) -> Result<HeaderValue, AuthError> {
    let mut h = HeaderValue::from_str(v).map_err(|_| AuthError::InvalidHeader)?;
    h.set_sensitive(true);
    Ok(h)
}

async fn run_exec(plugin: &ExecPlugin) -> Result<CachedToken, AuthError> {
    let fail = |message: String| AuthError::Exec {
        command: plugin.command.clone(),
        message,
    };
    let mut info = serde_json::json!({
        "apiVersion": plugin.api_version,
        "kind": "ExecCredential",
        "spec": { "interactive": false },
    });
    if let Some(cluster) = &plugin.cluster {
        info["spec"]["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    tracing::debug!(command = %plugin.command, "running exec credential plugin");
    let output = tokio::process::Command::new(&plugin.command)
        .args(&plugin.args)
        .envs(plugin.env.iter().map(|(k, v)| (k, v)))
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| match &plugin.install_hint {
            Some(hint) if e.kind() == std::io::ErrorKind::NotFound => {
                fail(format!("could not start: {e}\n\n{hint}"))
            }
            _ => fail(format!("could not start: {e}")),
        })?;
    if !output.status.success() {
        return Err(fail(format!("exited with {}", output.status)));
    }
    let cred: ExecCredential = serde_json::from_slice(&output.stdout).map_err(|e| {
        // the position only: the output may hold a token
        fail(format!(
            "output is not an ExecCredential (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let status = cred
        .status
        .ok_or_else(|| fail("ExecCredential has no status".into()))?;
    let token = match status.token {
        Some(t) if !t.is_empty() => SecretString::from(t),
        _ if status.client_certificate_data.is_some() => {
            return Err(fail(
                "client certificates from exec plugins are not supported; a token is required"
                    .into(),
            ));
        }
        _ => return Err(fail("ExecCredential status has no token".into())),
    };
    let expires = match status.expiration_timestamp {
        None => None,
        Some(ts) => {
            let parsed: k8s_openapi::jiff::Timestamp = ts
                .parse()
                .map_err(|_| fail("expirationTimestamp is not RFC 3339".into()))?;
            Some(SystemTime::from(parsed))
        }
    };
    Ok(CachedToken { token, expires })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bearer_header_is_sensitive_and_redacted_in_debug() {
        let a = Authenticator::new(Credentials::Bearer("s3cr3t-token".to_string().into()));
        let h = a.header().await.unwrap().unwrap();
        assert_eq!(h.to_str().unwrap(), "Bearer s3cr3t-token");
        assert!(h.is_sensitive());
        assert!(!format!("{h:?}").contains("s3cr3t"));
        assert!(!format!("{a:?}").contains("s3cr3t"));
    }

    #[tokio::test]
    async fn basic_auth_encodes_user_and_password() {
        let a = Authenticator::new(Credentials::Basic {
            username: "admin".into(),
            password: "hunter2".to_string().into(),
        });
        let h = a.header().await.unwrap().unwrap();
        assert_eq!(h.to_str().unwrap(), "Basic YWRtaW46aHVudGVyMg==");
        assert!(!format!("{:?}", a.credentials()).contains("hunter2"));
    }

    #[tokio::test]
    async fn no_credentials_no_header() {
        assert!(
            Authenticator::new(Credentials::None)
                .header()
                .await
                .unwrap()
                .is_none()
        );
        assert!(!Authenticator::new(Credentials::None).invalidate().await);
    }

    #[tokio::test]
    async fn missing_token_file_is_an_error() {
        let a = Authenticator::new(Credentials::TokenFile("/nonexistent/token".into()));
        assert!(matches!(a.header().await, Err(AuthError::TokenFile { .. })));
    }
}
