//! Credentials and the `Authorization` header: static bearer tokens, token files re-read when
//! they change (bound service-account tokens rotate), basic auth, and exec credential plugins
//! (client-go's `plugin/pkg/client/auth/exec`), cached until their `expirationTimestamp` and run
//! again when the server answers 401. A plugin may return a bearer token, a TLS client
//! certificate and key (`clientCertificateData` / `clientKeyData`, handed to the transport
//! through an [`ExecClientCert`]), or both; its `interactiveMode` decides whether it gets
//! the terminal (client-go's rules: `Never`, `IfAvailable`, `Always`).
//!
//! Nothing secret is ever formatted: the `Debug` impls here print `<redacted>`, header values
//! are marked sensitive, and exec plugin output and errors are never logged or copied into an
//! error message.

use std::{
    fmt,
    io::IsTerminal as _,
    path::{Path, PathBuf},
    process::Stdio,
    time::SystemTime,
};

use base64::Engine as _;
use http::HeaderValue;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::{
    exec_cert::ExecClientCert,
    kubeconfig::{self, EXEC_CLUSTER_EXTENSION, ExecConfig, ExecInteractiveMode, KubeconfigError},
};

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
    /// The plugin's `interactiveMode` cannot be honoured (client-go's wording: `Always`
    /// without a terminal on standard input, or with standard input taken).
    #[error("exec plugin cannot support interactive mode: {0}")]
    Interactive(String),
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
    /// Whether the plugin may read standard input (kubeconfig's `interactiveMode`;
    /// `IfAvailable` when a `v1beta1` block leaves it out, as client-go defaults it).
    pub interactive_mode: ExecInteractiveMode,
    /// Standard input is used for something else (kubectl sets this for `-f -`): an
    /// `IfAvailable` plugin then runs without it and an `Always` plugin fails, with
    /// `stdin_unavailable_message` as the reason when set (client-go's `StdinUnavailable`).
    pub stdin_unavailable: bool,
    /// Why standard input is unavailable, added to the `Always` error.
    pub stdin_unavailable_message: Option<String>,
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
            interactive_mode: ExecInteractiveMode::IfAvailable,
            stdin_unavailable: false,
            stdin_unavailable_message: None,
        }
    }

    /// Sets `interactiveMode`.
    pub fn with_interactive_mode(mut self, mode: ExecInteractiveMode) -> Self {
        self.interactive_mode = mode;
        self
    }

    /// Whether the plugin runs interactively (gets this process's standard input and
    /// `spec.interactive: true`) when standard input `is_terminal` or not: client-go's
    /// `isInteractive`. `Never` never does; `IfAvailable` does when standard input is a
    /// terminal and not otherwise taken; `Always` must, and fails when it cannot.
    pub fn interactive(&self, stdin_is_terminal: bool) -> Result<bool, AuthError> {
        match self.interactive_mode {
            ExecInteractiveMode::Never => Ok(false),
            ExecInteractiveMode::IfAvailable => Ok(stdin_is_terminal && !self.stdin_unavailable),
            ExecInteractiveMode::Always => {
                if !stdin_is_terminal {
                    return Err(AuthError::Interactive(
                        "standard input is not a terminal".into(),
                    ));
                }
                if self.stdin_unavailable {
                    let reason = match self.stdin_unavailable_message.as_deref() {
                        Some(m) if !m.is_empty() => format!(": {m}"),
                        _ => String::new(),
                    };
                    return Err(AuthError::Interactive(format!(
                        "standard input is unavailable{reason}"
                    )));
                }
                Ok(true)
            }
        }
    }

    /// Adds arguments.
    pub fn with_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Takes the plugin settings from a kubeconfig `exec` block; `cluster` (the context's)
    /// is passed to the plugin when the block sets `provideClusterInfo`. Environment
    /// entries without a name are skipped. A `v1` block must say its `interactiveMode`
    /// (client-go's kubeconfig validation); a `v1beta1` (or `v1alpha1`) one defaults to
    /// `IfAvailable`.
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
        let api_version = exec
            .api_version
            .clone()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| EXEC_API_VERSION.to_string());
        let interactive_mode = match exec.interactive_mode {
            Some(mode) => mode,
            None if api_version.ends_with("/v1beta1") || api_version.ends_with("/v1alpha1") => {
                ExecInteractiveMode::IfAvailable
            }
            None => {
                return Err(AuthError::Exec {
                    command: exec.command.clone(),
                    message: format!(
                        "interactiveMode must be specified to use exec authentication plugin with {api_version}"
                    ),
                });
            }
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
            api_version,
            cluster,
            install_hint: exec.install_hint.clone().filter(|h| !h.is_empty()),
            interactive_mode,
            stdin_unavailable: false,
            stdin_unavailable_message: None,
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
            .field("interactive_mode", &self.interactive_mode)
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
    #[serde(default)]
    client_key_data: Option<String>,
}

/// What a plugin run gave: a token, a client certificate (installed in the
/// [`ExecClientCert`] at once), or both, and until when.
struct CachedCredential {
    token: Option<SecretString>,
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
    exec_cache: tokio::sync::Mutex<Option<CachedCredential>>,
    client_cert: Option<ExecClientCert>,
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
            client_cert: None,
        }
    }

    /// Installs the client certificates an exec plugin returns in `slot`, which the
    /// transport presents in its TLS handshakes
    /// ([`HttpTransport::with_exec_client_cert`](super::HttpTransport::with_exec_client_cert)).
    /// Without a slot, a plugin that returns only a certificate is an error.
    pub fn with_exec_client_cert(mut self, slot: ExecClientCert) -> Self {
        self.client_cert = Some(slot);
        self
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
            Credentials::Exec(plugin) => match self.token_from_exec(plugin).await? {
                Some(token) => bearer(token.expose_secret())?,
                // a certificate-only plugin: its certificate is in the transport's slot
                None => return Ok(None),
            },
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

    /// The plugin's token (none for a certificate-only plugin), running it when nothing
    /// is cached or the cached credential has expired; a returned certificate goes to the
    /// transport's slot before the request that needed it is sent.
    async fn token_from_exec(
        &self,
        plugin: &ExecPlugin,
    ) -> Result<Option<SecretString>, AuthError> {
        let mut cache = self.exec_cache.lock().await;
        if let Some(c) = &*cache
            && c.expires.is_none_or(|e| SystemTime::now() < e)
        {
            return Ok(c.token.clone());
        }
        let output = run_exec(plugin).await?;
        let fail = |message: String| AuthError::Exec {
            command: plugin.command.clone(),
            message,
        };
        if let Some((cert, key)) = &output.certificate {
            match &self.client_cert {
                Some(slot) => {
                    let changed = slot
                        .set(cert, key.expose_secret().as_bytes())
                        .map_err(|e| fail(e.to_string()))?;
                    tracing::debug!(command = %plugin.command, changed, "exec plugin returned a client certificate");
                }
                None if output.credential.token.is_none() => {
                    return Err(fail(
                        "the plugin returned a client certificate, which this client's transport cannot present"
                            .into(),
                    ));
                }
                None => {}
            }
        }
        let token = output.credential.token.clone();
        *cache = Some(output.credential);
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

/// What one run of a plugin printed, checked.
struct ExecOutput {
    credential: CachedCredential,
    /// The certificate chain (PEM) and its key.
    certificate: Option<(Vec<u8>, SecretString)>,
}

async fn run_exec(plugin: &ExecPlugin) -> Result<ExecOutput, AuthError> {
    let fail = |message: String| AuthError::Exec {
        command: plugin.command.clone(),
        message,
    };
    let interactive = plugin.interactive(std::io::stdin().is_terminal())?;
    let mut info = serde_json::json!({
        "apiVersion": plugin.api_version,
        "kind": "ExecCredential",
        "spec": { "interactive": interactive },
    });
    if let Some(cluster) = &plugin.cluster {
        info["spec"]["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    tracing::debug!(command = %plugin.command, interactive, "running exec credential plugin");
    // an interactive plugin talks to the user: it gets the terminal and its stderr shows
    let (stdin, stderr) = if interactive {
        (Stdio::inherit(), Stdio::inherit())
    } else {
        (Stdio::null(), Stdio::piped())
    };
    let output = tokio::process::Command::new(&plugin.command)
        .args(&plugin.args)
        .envs(plugin.env.iter().map(|(k, v)| (k, v)))
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(stderr)
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
    let token = status
        .token
        .filter(|t| !t.is_empty())
        .map(SecretString::from);
    let cert = status.client_certificate_data.filter(|c| !c.is_empty());
    let key = status
        .client_key_data
        .filter(|k| !k.is_empty())
        .map(SecretString::from);
    // client-go's checks of the status, in its words
    let certificate = match (cert, key) {
        (Some(cert), Some(key)) => Some((cert.into_bytes(), key)),
        (None, None) if token.is_none() => {
            return Err(fail("plugin didn't return a token or cert/key pair".into()));
        }
        (None, None) => None,
        _ => {
            return Err(fail(
                "plugin returned only certificate or key, not both".into(),
            ));
        }
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
    Ok(ExecOutput {
        credential: CachedCredential { token, expires },
        certificate,
    })
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

    // client-go plugin/pkg/client/auth/exec/exec_test.go (TestRefreshCreds' interactive
    // cases) and exec.go's isInteractive: each mode, with standard input a terminal or not,
    // and taken by something else.
    #[test]
    fn interactive_mode_rules() {
        use ExecInteractiveMode::{Always, IfAvailable, Never};
        let plugin = |mode| ExecPlugin::new("p").with_interactive_mode(mode);
        let message = |r: Result<bool, AuthError>| r.map_err(|e| e.to_string());
        for terminal in [false, true] {
            assert_eq!(message(plugin(Never).interactive(terminal)), Ok(false));
            assert_eq!(
                message(plugin(IfAvailable).interactive(terminal)),
                Ok(terminal)
            );
        }
        assert_eq!(message(plugin(Always).interactive(true)), Ok(true));
        assert_eq!(
            message(plugin(Always).interactive(false)),
            Err(
                "exec plugin cannot support interactive mode: standard input is not a terminal"
                    .into()
            )
        );

        let mut taken = plugin(IfAvailable);
        taken.stdin_unavailable = true;
        assert_eq!(message(taken.interactive(true)), Ok(false));
        let mut taken = plugin(Always);
        taken.stdin_unavailable = true;
        assert_eq!(
            message(taken.interactive(true)),
            Err(
                "exec plugin cannot support interactive mode: standard input is unavailable".into()
            )
        );
        taken.stdin_unavailable_message = Some("used by -f -".into());
        assert_eq!(
            message(taken.interactive(true)),
            Err("exec plugin cannot support interactive mode: standard input is unavailable: used by -f -".into())
        );
        assert_eq!(
            message(taken.interactive(false)),
            Err(
                "exec plugin cannot support interactive mode: standard input is not a terminal"
                    .into()
            ),
            "the terminal is checked first"
        );
    }

    // client-go clientcmd: a v1beta1 exec block without interactiveMode is IfAvailable;
    // a v1 block must name one.
    #[test]
    fn interactive_mode_defaults_by_api_version() {
        let cluster = kubeconfig::Cluster::default();
        let exec = |api_version: &str| ExecConfig {
            command: "p".into(),
            api_version: Some(api_version.into()),
            ..ExecConfig::default()
        };
        let beta = ExecPlugin::from_kubeconfig(&exec(EXEC_API_VERSION), &cluster).unwrap();
        assert_eq!(beta.interactive_mode, ExecInteractiveMode::IfAvailable);
        let err = ExecPlugin::from_kubeconfig(&exec("client.authentication.k8s.io/v1"), &cluster)
            .unwrap_err()
            .to_string();
        assert!(err.contains("interactiveMode must be specified"), "{err}");
        let mut v1 = exec("client.authentication.k8s.io/v1");
        v1.interactive_mode = Some(ExecInteractiveMode::Always);
        let plugin = ExecPlugin::from_kubeconfig(&v1, &cluster).unwrap();
        assert_eq!(plugin.interactive_mode, ExecInteractiveMode::Always);
    }
}
