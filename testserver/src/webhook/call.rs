//! One call to a webhook: a JSON review POSTed over TLS to the hook's address, verified
//! against its `caBundle`, within its timeout (kube-apiserver's `webhook.ClientManager`
//! rest client). The errors read as kube-apiserver's Go errors do, since they end up in
//! the messages clients see: `Post "https://...?timeout=10s": context deadline exceeded`.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use serde_json::Value;

use super::pool::{Key, Pool, Sender};
use super::{ClientConfig, Endpoint, Services};

/// The largest response read (kube-apiserver's webhook responses are bounded the same way,
/// by the request size limit).
const MAX_RESPONSE: usize = 3 * 1024 * 1024;

/// A call that did not produce a JSON answer. Displays as kube-apiserver's error does:
/// `Post "<url>": <reason>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Post \"{url}\": {reason}")]
pub(crate) struct CallError {
    /// The URL posted to, with kube-apiserver's `?timeout=` query.
    pub(crate) url: String,
    /// What went wrong, in Go's words where the cause has a Go counterpart.
    pub(crate) reason: String,
    /// The call ran out of time (`context deadline exceeded`).
    pub(crate) timed_out: bool,
}

/// POSTs `body` to the hook and decodes its JSON answer, giving up after `timeout`. The
/// connection is taken from the Services' pool when one is kept open, and goes back to it
/// afterwards; a kept connection that fails before answering (the server closed it) is
/// replaced by a fresh one once, as Go's transport retries a request it never wrote.
pub(crate) async fn post_json(
    config: &ClientConfig,
    services: &Services,
    body: &Value,
    timeout: Duration,
) -> Result<Value, CallError> {
    let url = url_with_timeout(&config.url(), timeout);
    let fail = |reason: String| CallError {
        url: url.clone(),
        reason,
        timed_out: false,
    };
    let attempt = async {
        let payload = Bytes::from(serde_json::to_vec(body).map_err(|err| fail(err.to_string()))?);
        let path_and_query = url
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()))
            .unwrap_or_else(|| "/".to_string());
        let request = || {
            http::Request::post(path_and_query.as_str())
                .header(http::header::HOST, config.server_name())
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "application/json, */*")
                .body(Full::new(payload.clone()))
                .map_err(|err| fail(err.to_string()))
        };
        let key = key(config, services).map_err(&fail)?;
        let pool = services.pool();
        // A kept connection first; a fresh one when there is none or it failed.
        let kept = match pool.take(&key) {
            Some(mut sender) => match send(&mut sender, request()?).await {
                Ok(response) => Some((sender, response)),
                Err(err) => {
                    tracing::debug!(%err, "kept webhook connection failed; dialling again");
                    None
                }
            },
            None => None,
        };
        let (sender, response) = match kept {
            Some(answered) => answered,
            None => {
                let mut sender = dial(config, &key, pool).await.map_err(&fail)?;
                let response = send(&mut sender, request()?).await.map_err(&fail)?;
                (sender, response)
            }
        };
        let status = response.status();
        let bytes = Limited::new(response.into_body(), MAX_RESPONSE)
            .collect()
            .await
            .map_err(|err| fail(err.to_string()))?
            .to_bytes();
        // The whole answer was read: the connection can carry the next call (which waits
        // for it to be ready, or dials again when it closed meanwhile).
        pool.put(&key, sender);
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes);
            let text: String = text.chars().take(512).collect();
            return Err(fail(format!(
                "an error on the server ({text:?}) has prevented the request from succeeding (status {})",
                status.as_u16()
            )));
        }
        serde_json::from_slice::<Value>(&bytes)
            .map_err(|err| fail(format!("couldn't decode the response: {err}")))
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(CallError {
            url: url.clone(),
            reason: "context deadline exceeded".to_string(),
            timed_out: true,
        }),
    }
}

/// Sends one request on an open connection.
async fn send(
    sender: &mut Sender,
    request: http::Request<Full<Bytes>>,
) -> Result<http::Response<hyper::body::Incoming>, String> {
    sender.ready().await.map_err(|err| err.to_string())?;
    sender
        .send_request(request)
        .await
        .map_err(|err| err.to_string())
}

/// Which kept connections a call may use: where it dials (a Service resolved to the
/// address its test registered), the certificate's name and the bundle.
fn key(config: &ClientConfig, services: &Services) -> Result<Key, String> {
    let target = match &config.endpoint {
        Endpoint::Url { host, port, .. } => format!("{host}:{port}"),
        Endpoint::Service {
            namespace,
            name,
            port,
            ..
        } => services
            .resolve(namespace, name, *port)
            .ok_or_else(|| format!("service \"{name}\" not found"))?
            .to_string(),
    };
    Ok(Key {
        target,
        server_name: config.server_name(),
        ca_bundle: config.ca_bundle.clone(),
    })
}

/// A new connection: TCP, the TLS handshake verified against the bundle, HTTP/1.1.
async fn dial(config: &ClientConfig, key: &Key, pool: &Pool) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(key.target.as_str())
        .await
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::ConnectionRefused => {
                format!("dial tcp {}: connect: connection refused", key.target)
            }
            _ => format!("dial tcp {}: {err}", key.target),
        })?;
    let server_name = ServerName::try_from(config.server_name())
        .map_err(|err| format!("invalid server name: {err}"))?;
    let tls = tokio_rustls::TlsConnector::from(pool.tls(key)?)
        .connect(server_name, stream)
        .await
        .map_err(|err| tls_reason(&err, &config.server_name()))?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|err| err.to_string())?;
    tokio::spawn(async move {
        if let Err(err) = connection.await {
            tracing::debug!(%err, "webhook connection ended");
        }
    });
    Ok(sender)
}

/// kube-apiserver adds the hook's timeout to the URL as `?timeout=10s`.
fn url_with_timeout(url: &str, timeout: Duration) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}timeout={}s", timeout.as_secs().max(1))
}

/// Go's words for a failed handshake.
fn tls_reason(err: &std::io::Error, server_name: &str) -> String {
    use rustls::{CertificateError, Error};
    match err.get_ref().and_then(|e| e.downcast_ref::<Error>()) {
        // A chain to another CA, or to a CA of the bundle's name but another key.
        Some(Error::InvalidCertificate(
            CertificateError::UnknownIssuer | CertificateError::BadSignature,
        )) => "tls: failed to verify certificate: x509: certificate signed by unknown authority"
            .to_string(),
        Some(Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        )) => format!(
            "tls: failed to verify certificate: x509: certificate is not valid for {server_name}"
        ),
        Some(Error::InvalidCertificate(
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. },
        )) => {
            "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
                .to_string()
        }
        Some(other) => format!("tls: {other}"),
        None => format!("tls: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_goes_into_the_query() {
        // kube-apiserver `webhook.ClientManager.HookClient` sets `?timeout=` from the hook's
        // timeoutSeconds.
        assert_eq!(
            url_with_timeout("https://a.b.svc:443/v", Duration::from_secs(10)),
            "https://a.b.svc:443/v?timeout=10s"
        );
        assert_eq!(
            url_with_timeout("https://a/v?x=1", Duration::from_secs(3)),
            "https://a/v?x=1&timeout=3s"
        );
    }

    #[tokio::test]
    async fn an_unregistered_service_is_not_found() {
        let config = ClientConfig::from_json(
            &serde_json::json!({"service": {"namespace": "system", "name": "hook"}}),
        )
        .expect("config");
        let err = post_json(
            &config,
            &Services::default(),
            &serde_json::json!({}),
            Duration::from_secs(1),
        )
        .await
        .expect_err("no address");
        assert_eq!(
            err.to_string(),
            "Post \"https://hook.system.svc:443/?timeout=1s\": service \"hook\" not found"
        );
    }
}
