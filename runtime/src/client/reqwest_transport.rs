//! The production [`Transport`]: reqwest over rustls (ring provider), gzip, HTTP/2, proxies
//! and timeouts from the [`Config`].
//!
//! Requests arrive with a path-only URI (as kube-core builds them) and are resolved against
//! the configured cluster URL. TLS is a rustls `ClientConfig` built here, so CA bundles,
//! client certificates, `insecure-skip-tls-verify` and `tls-server-name` behave as in kubectl.

use std::sync::Arc;

use futures::TryStreamExt as _;
use rustls::{
    ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject},
};
use secrecy::ExposeSecret as _;

use super::{
    config::{Config, ConfigError, TlsConfig},
    transport::{Body, BoxFuture, Transport, TransportError},
};

/// Sends requests with reqwest.
#[derive(Clone, Debug)]
pub struct ReqwestTransport {
    client: reqwest::Client,
    base: http::Uri,
}

impl ReqwestTransport {
    /// A transport for `config`'s server, TLS, proxy and timeouts.
    pub fn new(config: &Config) -> Result<Self, ConfigError> {
        let mut b = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            .gzip(!config.disable_compression)
            .redirect(reqwest::redirect::Policy::none())
            // always preconfigured: reqwest has no crypto provider of its own here
            .tls_backend_preconfigured(rustls_config(&config.tls)?);
        if let Some(t) = config.connect_timeout {
            b = b.connect_timeout(t);
        }
        if let Some(t) = config.read_timeout {
            b = b.read_timeout(t);
        }
        b = match &config.proxy_url {
            Some(p) => b.proxy(
                reqwest::Proxy::all(p.to_string())
                    .map_err(|e| ConfigError::Url(format!("proxy: {e}")))?,
            ),
            None => b.no_proxy(),
        };
        let client = b.build().map_err(|e| ConfigError::Http(e.to_string()))?;
        Ok(Self {
            client,
            base: config.cluster_url.clone(),
        })
    }

    fn resolve(&self, uri: &http::Uri) -> Result<reqwest::Url, TransportError> {
        let full = if uri.scheme().is_some() {
            uri.to_string()
        } else {
            let base = self.base.to_string();
            let base = base.trim_end_matches('/');
            let pq = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
            format!("{base}{pq}")
        };
        reqwest::Url::parse(&full).map_err(|e| TransportError::Other(format!("bad url: {e}")))
    }
}

impl Transport for ReqwestTransport {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let url = self.resolve(request.uri());
        let client = self.client.clone();
        Box::pin(async move {
            let url = url?;
            let (parts, body) = request.into_parts();
            let mut req = reqwest::Request::new(parts.method, url);
            *req.headers_mut() = parts.headers;
            if let Some(timeout) = parts.extensions.get::<RequestTimeout>() {
                *req.timeout_mut() = Some(timeout.0);
            }
            if !body.is_empty() {
                *req.body_mut() = Some(body.into());
            }
            let resp = client.execute(req).await.map_err(map_err)?;
            let mut out = http::Response::builder().status(resp.status());
            if let Some(h) = out.headers_mut() {
                *h = resp.headers().clone();
            }
            let stream = resp
                .bytes_stream()
                .map_err(|e| TransportError::Body(e.to_string()));
            out.body(Body::from_stream(stream))
                .map_err(|e| TransportError::Other(e.to_string()))
        })
    }
}

/// A per-request timeout, set as an `http::Request` extension by the client for
/// non-streaming calls.
#[derive(Clone, Copy, Debug)]
pub struct RequestTimeout(pub std::time::Duration);

fn map_err(e: reqwest::Error) -> TransportError {
    if e.is_timeout() {
        TransportError::Timeout(e.to_string())
    } else if e.is_connect() {
        TransportError::Connect(format!("{e}: {}", source_chain(&e)))
    } else if e.is_body() || e.is_decode() {
        TransportError::Body(e.to_string())
    } else {
        TransportError::Other(format!("{e}: {}", source_chain(&e)))
    }
}

fn source_chain(e: &dyn std::error::Error) -> String {
    let mut out = Vec::new();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push(s.to_string());
        cur = s.source();
    }
    out.join(": ")
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The rustls client configuration for `tls`.
pub fn rustls_config(tls: &TlsConfig) -> Result<ClientConfig, ConfigError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::Tls(e.to_string()))?;

    let mut roots = RootCertStore::empty();
    match &tls.root_certs {
        Some(certs) => {
            for der in certs {
                roots
                    .add(CertificateDer::from(der.clone()))
                    .map_err(|e| ConfigError::Tls(format!("invalid CA certificate: {e}")))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let verifier: Arc<dyn ServerCertVerifier> = if tls.insecure_skip_tls_verify {
        Arc::new(NoVerify(provider.clone()))
    } else {
        let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .map_err(|e| ConfigError::Tls(e.to_string()))?;
        match &tls.server_name {
            Some(name) => Arc::new(FixedName {
                inner,
                name: ServerName::try_from(name.clone())
                    .map_err(|e| ConfigError::Tls(format!("tls-server-name: {e}")))?,
            }),
            None => inner,
        }
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);

    let mut cfg = match (&tls.client_cert_pem, &tls.client_key_pem) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| ConfigError::Tls("invalid client certificate PEM".into()))?;
            let key = PrivateKeyDer::from_pem_slice(key.expose_secret().as_bytes())
                .map_err(|_| ConfigError::Tls("invalid client key PEM".into()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|_| ConfigError::Tls("client certificate and key do not match".into()))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => {
            return Err(ConfigError::Tls(
                "client certificate and key must be given together".into(),
            ));
        }
    };
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(cfg)
}

/// Verifies the chain normally but checks it against a configured name (`tls-server-name`).
#[derive(Debug)]
struct FixedName {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    name: ServerName<'static>,
}

impl ServerCertVerifier for FixedName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, &self.name, ocsp, now)
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `insecure-skip-tls-verify`: any certificate is accepted, signatures are still checked.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
