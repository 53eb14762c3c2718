//! Client configuration: where the API server is, how to trust it, who we are, and how hard
//! we may hit it (client-go's `rest.Config`).
//!
//! kubeconfig files are read by [`kubeconfig`](super::kubeconfig) with client-go's semantics
//! (`KUBECONFIG` merging, contexts, relative paths), and in-cluster settings from the mounted
//! service account; this module turns either into a [`Config`].
//!
//! # Client-side throttling is off by default
//!
//! client-go's `rest.Config` throttles every client to 5 requests per second (burst 10),
//! which makes an informer's first paged list of 100k objects take 38 s instead of 0.74 s.
//! Servers have had API Priority and Fairness since 1.20 (GA in 1.29), and SIG API
//! Machinery recommends relying on it instead of a client-side limit for servers ≥ 1.22;
//! controller-runtime's config getters disable the client-side limiter since #3119 (2025),
//! and kube-rs never had one. kubegen follows them: a [`Config`] has `qps` -1 (off).
//! Ask for client-go's limiter with [`Config::with_rate_limit`]`(DEFAULT_QPS, DEFAULT_BURST)`
//! (or any other figures) where a client must stay gentle on its own.

use std::{fmt, path::Path, path::PathBuf, time::Duration};

use http::{HeaderName, HeaderValue};
use secrecy::SecretString;

use super::auth::{AuthError, Credentials, ExecPlugin};
use super::content::ContentType;
use super::kubeconfig::{KubeConfigOptions, Kubeconfig, KubeconfigError, Selection};

/// Service-account files mounted into every pod.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The default number of retries on 429/503 (client-go's `maxRetries`).
pub const DEFAULT_MAX_RETRIES: u32 = 10;

/// Why a configuration could not be loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The kubeconfig could not be loaded or lacks what was asked for (errors never quote
    /// the file).
    #[error("kubeconfig: {0}")]
    Kubeconfig(#[from] KubeconfigError),
    /// Neither a kubeconfig nor in-cluster settings were found.
    #[error(
        "no Kubernetes cluster configured: set KUBECONFIG or --kubeconfig, or create ~/.kube/config \
         (in a pod: mount a service account); kubeconfig: {kubeconfig}; in-cluster: {in_cluster}"
    )]
    Infer {
        /// Why the kubeconfig failed.
        kubeconfig: String,
        /// Why in-cluster failed.
        in_cluster: String,
    },
    /// In-cluster settings are missing or unreadable.
    #[error("in-cluster: {0}")]
    InCluster(String),
    /// Certificate or key material is unusable (the material itself is never quoted).
    #[error("tls: {0}")]
    Tls(String),
    /// A URL is invalid.
    #[error("invalid url: {0}")]
    Url(String),
    /// The credentials section is unusable.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The HTTP client could not be built.
    #[error("http client: {0}")]
    Http(String),
}

/// How to trust the server and prove who we are at the TLS layer.
#[derive(Clone, Default)]
pub struct TlsConfig {
    /// CA certificates (DER) to trust instead of the public web PKI roots.
    pub root_certs: Option<Vec<Vec<u8>>>,
    /// Client certificate chain, PEM.
    pub client_cert_pem: Option<Vec<u8>>,
    /// Client private key, PEM.
    pub client_key_pem: Option<SecretString>,
    /// Accept any server certificate (kubeconfig's `insecure-skip-tls-verify`).
    pub insecure_skip_tls_verify: bool,
    /// Verify the server certificate against this name instead of the URL's host.
    pub server_name: Option<String>,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("root_certs", &self.root_certs.as_ref().map(Vec::len))
            .field("client_cert", &self.client_cert_pem.is_some())
            .field(
                "client_key",
                &self.client_key_pem.as_ref().map(|_| "<redacted>"),
            )
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("server_name", &self.server_name)
            .finish()
    }
}

/// Everything needed to build a [`Client`](super::Client).
#[derive(Clone)]
pub struct Config {
    /// The API server, e.g. `https://10.0.0.1:6443`.
    pub cluster_url: http::Uri,
    /// The namespace used by `ResourceClient::default_namespaced`.
    pub default_namespace: String,
    /// Server trust and client certificates.
    pub tls: TlsConfig,
    /// Token, token file, basic auth or exec plugin.
    pub credentials: Credentials,
    /// `Impersonate-User`.
    pub impersonate_user: Option<String>,
    /// `Impersonate-Group`, one header per group.
    pub impersonate_groups: Vec<String>,
    /// An HTTP(S) proxy for every request.
    pub proxy_url: Option<http::Uri>,
    /// Timeout for establishing a connection.
    pub connect_timeout: Option<Duration>,
    /// Timeout between two reads of a response (applies to watches too).
    pub read_timeout: Option<Duration>,
    /// Timeout for a whole non-streaming request (not applied to watches).
    pub request_timeout: Option<Duration>,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// Client-side throttling rate; zero or negative (the default, -1) turns throttling
    /// off: the server's API Priority and Fairness limits the client (see the module docs).
    pub qps: f32,
    /// Client-side throttling burst.
    pub burst: u32,
    /// Do not ask for gzip responses.
    pub disable_compression: bool,
    /// How often a 429/503 is retried before it is returned.
    pub max_retries: u32,
    /// Extra headers sent with every request (values never printed).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The encoding of request and response bodies (client-go's `ContentConfig.ContentType`):
    /// [`ContentType::Json`] by default. [`ContentType::Cbor`] (KEP-4222) sends bodies as
    /// `application/cbor` (server-side apply as `application/apply-patch+cbor`), asks for
    /// `application/cbor` with JSON as the second choice, and reads watches as
    /// `application/cbor-seq`; every response is decoded as its `Content-Type` says. When
    /// the server answers a CBOR body with 415 UnsupportedMediaType, the client re-sends
    /// that request in JSON and stays on JSON for the rest of its life, as client-go does.
    /// Metadata-only requests (`PartialObjectMetadata`) stay JSON.
    pub content_type: ContentType,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("cluster_url", &redact_uri(&self.cluster_url))
            .field("default_namespace", &self.default_namespace)
            .field("tls", &self.tls)
            .field("credentials", &self.credentials)
            .field("impersonate_user", &self.impersonate_user)
            .field("impersonate_groups", &self.impersonate_groups)
            .field("proxy_url", &self.proxy_url.as_ref().map(redact_uri))
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("user_agent", &self.user_agent)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("disable_compression", &self.disable_compression)
            .field("max_retries", &self.max_retries)
            .field("content_type", &self.content_type)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Config {
    /// A configuration for `cluster_url` with client-go's defaults and no credentials.
    pub fn new(cluster_url: http::Uri) -> Self {
        Self {
            cluster_url,
            default_namespace: "default".into(),
            tls: TlsConfig::default(),
            credentials: Credentials::None,
            impersonate_user: None,
            impersonate_groups: Vec::new(),
            proxy_url: None,
            connect_timeout: Some(Duration::from_secs(30)),
            read_timeout: None,
            request_timeout: None,
            user_agent: format!("kubegen/{}", env!("CARGO_PKG_VERSION")),
            qps: -1.0,
            burst: 0,
            disable_compression: false,
            max_retries: DEFAULT_MAX_RETRIES,
            headers: Vec::new(),
            content_type: ContentType::Json,
        }
    }

    /// kubeconfig (`KUBECONFIG`, several files merged, or `~/.kube/config`) at its current
    /// context; failing that, in-cluster settings.
    pub async fn infer() -> Result<Self, ConfigError> {
        match Self::from_kubeconfig(&KubeConfigOptions::default()).await {
            Ok(c) => Ok(c),
            Err(kube_err) => {
                tracing::debug!(error = %kube_err, "no kubeconfig, trying in-cluster");
                Self::incluster().map_err(|in_err| ConfigError::Infer {
                    kubeconfig: kube_err.to_string(),
                    in_cluster: in_err.to_string(),
                })
            }
        }
    }

    /// The kubeconfig from `KUBECONFIG` (files merged, first wins; missing files skipped)
    /// or `~/.kube/config`, with the context, cluster and user chosen by `options`
    /// (default: current-context). See [`Kubeconfig::read`].
    pub async fn from_kubeconfig(options: &KubeConfigOptions) -> Result<Self, ConfigError> {
        Self::from_custom_kubeconfig(Kubeconfig::read()?, options).await
    }

    /// Merges `paths` the way `KUBECONFIG=a:b:c` does (the first file to set a value wins;
    /// missing files are skipped, it is an error when none exists) and loads the context
    /// chosen by `options`. See [`Kubeconfig::read_files`].
    pub async fn from_kubeconfig_files(
        paths: &[PathBuf],
        options: &KubeConfigOptions,
    ) -> Result<Self, ConfigError> {
        Self::from_custom_kubeconfig(Kubeconfig::read_files(paths)?, options).await
    }

    /// A parsed kubeconfig, at the context chosen by `options` ([`Kubeconfig::select`]).
    pub async fn from_custom_kubeconfig(
        kubeconfig: Kubeconfig,
        options: &KubeConfigOptions,
    ) -> Result<Self, ConfigError> {
        Self::from_selection(&kubeconfig.select(options)?)
    }

    /// The configuration a kubeconfig selection describes: the cluster's server, CA,
    /// `tls-server-name`, `insecure-skip-tls-verify`, `proxy-url` (else `HTTPS_PROXY` /
    /// `https_proxy`) and `disable-compression`; the context's namespace; the user's client
    /// certificate and, first found wins, exec plugin, token file, token, basic auth or
    /// auth-provider token (`id-token`, else `access-token`); and impersonation (`as`,
    /// `as-groups`, `as-uid`, `as-user-extra`).
    pub fn from_selection(sel: &Selection<'_>) -> Result<Self, ConfigError> {
        use secrecy::ExposeSecret as _;
        let nonempty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        let cluster = sel.cluster;
        let url: http::Uri = sel.server().parse().map_err(|e: http::uri::InvalidUri| {
            ConfigError::Url(format!("server of cluster {:?}: {e}", sel.cluster_name))
        })?;
        let mut c = Config::new(url).with_default_namespace(sel.namespace().unwrap_or("default"));
        let default_user = Default::default();
        let a = sel.user.unwrap_or(&default_user);
        c.tls = TlsConfig {
            root_certs: cluster
                .certificate_authority_pem()?
                .map(|pem| pem_certs(&pem))
                .transpose()?,
            client_cert_pem: a.client_certificate_pem()?,
            client_key_pem: a.client_key_pem()?,
            insecure_skip_tls_verify: cluster.insecure_skip_tls_verify,
            server_name: nonempty(&cluster.tls_server_name),
        };
        let secret = |s: &Option<SecretString>| s.clone().filter(|s| !s.expose_secret().is_empty());
        c.credentials = if let Some(exec) = &a.exec {
            Credentials::Exec(Box::new(ExecPlugin::from_kubeconfig(exec, cluster)?))
        } else if let Some(path) = a.token_file.as_ref().filter(|p| !p.as_os_str().is_empty()) {
            Credentials::TokenFile(path.clone())
        } else if let Some(token) = secret(&a.token) {
            Credentials::Bearer(token)
        } else if let (Some(username), Some(password)) = (nonempty(&a.username), &a.password) {
            Credentials::Basic {
                username,
                password: password.clone(),
            }
        } else if let Some(token) = a.auth_provider.as_ref().and_then(|p| {
            ["id-token", "access-token"]
                .into_iter()
                .find_map(|k| p.config.get(k).filter(|t| !t.expose_secret().is_empty()))
        }) {
            Credentials::Bearer(token.clone())
        } else {
            Credentials::None
        };
        c.impersonate_user = nonempty(&a.impersonate);
        c.impersonate_groups = a.impersonate_groups.clone();
        if let Some(uid) = nonempty(&a.impersonate_uid) {
            c.headers.push((
                HeaderName::from_static("impersonate-uid"),
                HeaderValue::from_str(&uid)
                    .map_err(|_| ConfigError::Http("invalid as-uid".into()))?,
            ));
        }
        for (key, values) in &a.impersonate_user_extra {
            let name = HeaderName::from_bytes(
                format!("impersonate-extra-{}", escape_extra_key(key)).as_bytes(),
            )
            .map_err(|_| ConfigError::Http("invalid as-user-extra key".into()))?;
            for v in values {
                let v = HeaderValue::from_str(v)
                    .map_err(|_| ConfigError::Http("invalid as-user-extra value".into()))?;
                c.headers.push((name.clone(), v));
            }
        }
        c.proxy_url = nonempty(&cluster.proxy_url)
            .or_else(|| std::env::var("HTTPS_PROXY").ok().filter(|s| !s.is_empty()))
            .or_else(|| std::env::var("https_proxy").ok().filter(|s| !s.is_empty()))
            .map(|p| {
                p.parse::<http::Uri>()
                    .map_err(|e| ConfigError::Url(format!("proxy: {e}")))
            })
            .transpose()?;
        c.disable_compression = cluster.disable_compression;
        Ok(c)
    }

    /// In-cluster settings: `KUBERNETES_SERVICE_HOST`/`PORT` and the mounted service account
    /// (token re-read when it rotates, CA, namespace).
    pub fn incluster() -> Result<Self, ConfigError> {
        let host = std::env::var("KUBERNETES_SERVICE_HOST")
            .map_err(|_| ConfigError::InCluster("KUBERNETES_SERVICE_HOST is not set".into()))?;
        let port = std::env::var("KUBERNETES_SERVICE_PORT")
            .map_err(|_| ConfigError::InCluster("KUBERNETES_SERVICE_PORT is not set".into()))?;
        Self::incluster_from(Path::new(SERVICE_ACCOUNT_DIR), &host, &port)
    }

    /// In-cluster settings from a service-account directory holding `token`, `ca.crt` and
    /// `namespace`, for an API server at `host:port`.
    pub fn incluster_from(dir: &Path, host: &str, port: &str) -> Result<Self, ConfigError> {
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let url: http::Uri = format!("https://{host}:{port}")
            .parse()
            .map_err(|e: http::uri::InvalidUri| ConfigError::Url(e.to_string()))?;
        let token = dir.join("token");
        if !token.exists() {
            return Err(ConfigError::InCluster(format!(
                "{} does not exist",
                token.display()
            )));
        }
        let ca = std::fs::read(dir.join("ca.crt"))
            .map_err(|e| ConfigError::InCluster(format!("reading ca.crt: {e}")))?;
        let namespace = std::fs::read_to_string(dir.join("namespace"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "default".into());
        let mut c = Self::new(url)
            .with_default_namespace(namespace)
            .with_credentials(Credentials::TokenFile(token));
        c.tls.root_certs = Some(pem_certs(&ca)?);
        Ok(c)
    }

    /// Sets the default namespace.
    pub fn with_default_namespace(mut self, ns: impl Into<String>) -> Self {
        self.default_namespace = ns.into();
        self
    }

    /// Sets the credentials.
    pub fn with_credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = credentials;
        self
    }

    /// Sets the TLS settings.
    pub fn with_tls(mut self, tls: TlsConfig) -> Self {
        self.tls = tls;
        self
    }

    /// Sets client-side throttling; `qps <= 0` turns it off.
    pub fn with_rate_limit(mut self, qps: f32, burst: u32) -> Self {
        self.qps = qps;
        self.burst = burst;
        self
    }

    /// Sets the user agent.
    pub fn with_user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// Sets the proxy.
    pub fn with_proxy(mut self, proxy: http::Uri) -> Self {
        self.proxy_url = Some(proxy);
        self
    }

    /// Sets connect and read timeouts.
    pub fn with_timeouts(mut self, connect: Option<Duration>, read: Option<Duration>) -> Self {
        self.connect_timeout = connect;
        self.read_timeout = read;
        self
    }

    /// Sets the timeout for whole non-streaming requests.
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets how many times 429/503 answers are retried.
    pub fn with_max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// Sets the encoding of bodies ([`Config::content_type`]): `ContentType::Cbor` turns
    /// CBOR on.
    pub fn with_content_type(mut self, content_type: ContentType) -> Self {
        self.content_type = content_type;
        self
    }
}

/// An `as-user-extra` key as an `Impersonate-Extra-` header name: lower-cased, and every
/// byte that may not appear in a header name percent-encoded (client-go escapes keys with
/// `url.PathEscape`; the API server unescapes them).
fn escape_extra_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'*+^`|".contains(&b) {
            out.push(char::from(b.to_ascii_lowercase()));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A URI for display, with any `user:password@` replaced.
fn redact_uri(u: &http::Uri) -> String {
    let s = u.to_string();
    match (u.authority(), u.scheme_str()) {
        (Some(a), Some(scheme)) if a.as_str().contains('@') => {
            let host = a.as_str().rsplit('@').next().unwrap_or_default();
            let pq = u.path_and_query().map(|p| p.as_str()).unwrap_or("");
            format!("{scheme}://<redacted>@{host}{pq}")
        }
        _ => s,
    }
}

/// The certificates in a PEM bundle, as DER.
pub fn pem_certs(pem: &[u8]) -> Result<Vec<Vec<u8>>, ConfigError> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let certs = CertificateDer::pem_slice_iter(pem)
        .map(|c| c.map(|c| c.as_ref().to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::Tls(format!("invalid PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(ConfigError::Tls("no certificate in PEM data".into()));
    }
    Ok(certs)
}
