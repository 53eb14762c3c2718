//! A webhook's `clientConfig` (admissionregistration.k8s.io/v1 `WebhookClientConfig`,
//! apiextensions.k8s.io/v1 `WebhookClientConfig`: the same shape), read from the stored
//! configuration's JSON.

use base64::Engine as _;
use serde_json::Value;

/// A `clientConfig` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConfigError {
    /// Neither `url` nor `service` (or both).
    #[error("exactly one of url or service is required")]
    NoEndpoint,
    /// `url` is not an absolute `https://` URL.
    #[error("invalid url {url:?}: {reason}")]
    BadUrl { url: String, reason: String },
    /// `caBundle` is not base64.
    #[error("invalid caBundle: {0}")]
    BadCaBundle(String),
}

/// Where the hook is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// `url`: `https://host[:port]/path`.
    Url {
        /// The host (a DNS name or an IP address; IPv6 without brackets).
        host: String,
        /// The port (443 when the URL names none).
        port: u16,
        /// The path and query.
        path: String,
    },
    /// `service`: a Service of the cluster.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The port (443 by default).
        port: u16,
        /// The path (`/` by default).
        path: String,
    },
}

/// A parsed `clientConfig`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientConfig {
    /// Where the hook is reached.
    pub(crate) endpoint: Endpoint,
    /// The PEM bundle the hook's certificate must chain to (empty: the system roots).
    pub(crate) ca_bundle: Vec<u8>,
}

impl ClientConfig {
    /// Reads a `clientConfig` object.
    pub(crate) fn from_json(config: &Value) -> Result<ClientConfig, ConfigError> {
        let ca_bundle =
            match config.get("caBundle").and_then(Value::as_str) {
                Some(b64) if !b64.is_empty() => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|err| ConfigError::BadCaBundle(err.to_string()))?,
                _ => Vec::new(),
            };
        let url = config.get("url").and_then(Value::as_str);
        let service = config.get("service").filter(|s| s.is_object());
        let endpoint = match (url, service) {
            (Some(url), None) => parse_url(url)?,
            (None, Some(service)) => {
                let field = |key: &str| {
                    service
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                let path = match field("path") {
                    p if p.is_empty() => "/".to_string(),
                    p => p,
                };
                let port = service
                    .get("port")
                    .and_then(Value::as_u64)
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(443);
                Endpoint::Service {
                    namespace: field("namespace"),
                    name: field("name"),
                    port,
                    path,
                }
            }
            _ => return Err(ConfigError::NoEndpoint),
        };
        Ok(ClientConfig {
            endpoint,
            ca_bundle,
        })
    }

    /// The URL kube-apiserver posts to (what its error messages show): a Service's is
    /// `https://<name>.<namespace>.svc:<port><path>`.
    pub(crate) fn url(&self) -> String {
        match &self.endpoint {
            Endpoint::Url { host, port, path } => {
                let host = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.clone()
                };
                format!("https://{host}:{port}{path}")
            }
            Endpoint::Service {
                namespace,
                name,
                port,
                path,
            } => format!("https://{name}.{namespace}.svc:{port}{path}"),
        }
    }

    /// The name the hook's certificate must be valid for (kube-apiserver verifies a
    /// Service's certificate for `<name>.<namespace>.svc`).
    pub(crate) fn server_name(&self) -> String {
        match &self.endpoint {
            Endpoint::Url { host, .. } => host.clone(),
            Endpoint::Service {
                namespace, name, ..
            } => format!("{name}.{namespace}.svc"),
        }
    }
}

fn parse_url(url: &str) -> Result<Endpoint, ConfigError> {
    let bad = |reason: &str| ConfigError::BadUrl {
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let uri: http::Uri = url.parse().map_err(|_| bad("not a URL"))?;
    if uri.scheme_str() != Some("https") {
        return Err(bad("'https' is the only allowed URL scheme"));
    }
    let authority = uri.authority().ok_or_else(|| bad("a host is required"))?;
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    if host.is_empty() {
        return Err(bad("a host is required"));
    }
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "/".to_string());
    Ok(Endpoint::Url {
        host: host.to_string(),
        port: authority.port_u16().unwrap_or(443),
        path,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn service_defaults_port_and_path() {
        // admissionregistration/v1 ServiceReference: port defaults to 443, path to "/".
        let c = ClientConfig::from_json(
            &json!({"service": {"namespace": "system", "name": "webhook-service"}}),
        )
        .expect("config");
        assert_eq!(c.url(), "https://webhook-service.system.svc:443/");
        assert_eq!(c.server_name(), "webhook-service.system.svc");
        assert!(c.ca_bundle.is_empty());
    }

    #[test]
    fn url_keeps_host_port_and_path() {
        let c = ClientConfig::from_json(
            &json!({"url": "https://127.0.0.1:8443/validate?x=1", "caBundle": "YWJj"}),
        )
        .expect("config");
        assert_eq!(
            c.endpoint,
            Endpoint::Url {
                host: "127.0.0.1".into(),
                port: 8443,
                path: "/validate?x=1".into()
            }
        );
        assert_eq!(c.ca_bundle, b"abc");
    }

    #[test]
    fn refuses_http_and_missing_endpoint_and_bad_bundle() {
        assert!(matches!(
            ClientConfig::from_json(&json!({"url": "http://a/b"})),
            Err(ConfigError::BadUrl { .. })
        ));
        assert_eq!(
            ClientConfig::from_json(&json!({})),
            Err(ConfigError::NoEndpoint)
        );
        assert!(matches!(
            ClientConfig::from_json(&json!({"url": "https://a/", "caBundle": "%%%"})),
            Err(ConfigError::BadCaBundle(_))
        ));
    }
}
