//! [`SelfSigned`]: a CA and a serving certificate generated with rcgen, each re-issued at two
//! thirds of its lifetime, so a long-running server never presents an expired certificate.

use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SerialNumber,
};
use time::OffsetDateTime;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{CertError, resolver::CertResolver};

/// What to generate: the names the serving certificate is valid for and the lifetimes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfSignedConfig {
    /// Subject alternative names: DNS names, or IP addresses (`127.0.0.1`, `::1`).
    pub hosts: Vec<String>,
    /// The CA's lifetime (default one year).
    pub ca_validity: Duration,
    /// The serving certificate's lifetime (default 30 days; never past the CA's end).
    pub cert_validity: Duration,
}

impl Default for SelfSignedConfig {
    /// `localhost`, `127.0.0.1` and `::1`.
    fn default() -> Self {
        Self {
            hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            ca_validity: Duration::from_secs(365 * 24 * 3600),
            cert_validity: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

impl SelfSignedConfig {
    /// For the Service `service` in `namespace`: the names the API server calls it by
    /// (`<svc>`, `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`), and the
    /// defaults' loopback names.
    pub fn for_service(service: &str, namespace: &str) -> Self {
        let mut config = Self::default();
        let names = [
            service.to_owned(),
            format!("{service}.{namespace}"),
            format!("{service}.{namespace}.svc"),
            format!("{service}.{namespace}.svc.cluster.local"),
        ];
        config.hosts.splice(0..0, names);
        config
    }

    /// Adds a DNS name or an IP address.
    #[must_use]
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.hosts.push(host.into());
        self
    }

    /// Sets the CA's lifetime.
    #[must_use]
    pub fn ca_validity(mut self, validity: Duration) -> Self {
        self.ca_validity = validity;
        self
    }

    /// Sets the serving certificate's lifetime.
    #[must_use]
    pub fn cert_validity(mut self, validity: Duration) -> Self {
        self.cert_validity = validity;
        self
    }
}

/// A CA in use: what signs, its PEM, when it ends and when to replace it.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
    not_after: SystemTime,
    rotate_at: Instant,
}

/// The generator: the current CA (and the one before it while it is valid, so the bundle
/// verifies certificates of both), and when the serving certificate is due.
pub struct SelfSigned {
    config: SelfSignedConfig,
    ca: Ca,
    previous_ca: Option<(String, SystemTime)>,
    cert_rotate_at: Instant,
}

impl std::fmt::Debug for SelfSigned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfSigned")
            .field("config", &self.config)
            .field("ca_not_after", &self.ca.not_after)
            .finish_non_exhaustive()
    }
}

fn random_serial() -> SerialNumber {
    let mut bytes: [u8; 16] = rand::random();
    bytes[0] = (bytes[0] & 0x7f) | 0x01; // positive, and no leading zero byte
    SerialNumber::from_slice(&bytes)
}

fn to_offset(t: SystemTime) -> OffsetDateTime {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    OffsetDateTime::from_unix_timestamp(i64::try_from(secs).unwrap_or(i64::MAX))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// When to re-issue something valid for `lifetime` from now: at two thirds of it.
fn rotation_point(lifetime: Duration) -> Instant {
    Instant::now() + lifetime.mul_f64(2.0 / 3.0)
}

/// Clock skew the certificates tolerate: valid from a minute ago.
const BACKDATE: Duration = Duration::from_secs(60);

fn new_ca(validity: Duration) -> Result<Ca, CertError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "kubegen-webhook-ca");
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let now = SystemTime::now();
    let not_after = now + validity;
    params.not_before = to_offset(now - BACKDATE);
    params.not_after = to_offset(not_after);
    params.serial_number = Some(random_serial());
    let cert = params.self_signed(&key)?;
    Ok(Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
        not_after,
        rotate_at: rotation_point(validity),
    })
}

impl SelfSigned {
    /// A new CA for `config` (the serving certificate is issued by [`issue`](Self::issue)).
    pub fn new(config: SelfSignedConfig) -> Result<Self, CertError> {
        let ca = new_ca(config.ca_validity)?;
        Ok(Self {
            config,
            ca,
            previous_ca: None,
            cert_rotate_at: Instant::now(),
        })
    }

    /// The CA bundle (PEM): the current CA, and the previous one while it is valid.
    pub fn ca_bundle(&self) -> String {
        let mut bundle = self.ca.pem.clone();
        if let Some((pem, not_after)) = &self.previous_ca
            && *not_after > SystemTime::now()
        {
            bundle.push_str(pem);
        }
        bundle
    }

    /// Issues a serving certificate from the current CA and hands it to `resolver`.
    pub fn issue(&mut self, resolver: &CertResolver) -> Result<(), CertError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(self.config.hosts.clone())?;
        let mut name = DistinguishedName::new();
        let common_name = self
            .config
            .hosts
            .first()
            .map_or("kubegen-webhook", String::as_str);
        name.push(DnType::CommonName, common_name);
        params.distinguished_name = name;
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let now = SystemTime::now();
        let not_after = (now + self.config.cert_validity).min(self.ca.not_after);
        let lifetime = not_after.duration_since(now).unwrap_or_default();
        params.not_before = to_offset(now - BACKDATE);
        params.not_after = to_offset(not_after);
        params.serial_number = Some(random_serial());
        let cert = params.signed_by(&key, &self.ca.issuer)?;
        let chain = cert.pem();
        resolver.set(
            chain.as_bytes(),
            key.serialize_pem().as_bytes(),
            self.ca_bundle().as_bytes(),
        )?;
        self.cert_rotate_at = rotation_point(lifetime);
        tracing::info!(
            hosts = ?self.config.hosts,
            valid_for = ?lifetime,
            "issued a serving certificate"
        );
        Ok(())
    }

    /// Replaces the CA (the old one stays in the bundle while it is valid) and issues a
    /// serving certificate from the new one.
    fn rotate_ca(&mut self, resolver: &CertResolver) -> Result<(), CertError> {
        let ca = new_ca(self.config.ca_validity)?;
        let old = std::mem::replace(&mut self.ca, ca);
        self.previous_ca = Some((old.pem, old.not_after));
        tracing::info!("rotated the self-signed CA");
        self.issue(resolver)
    }

    /// Re-issues the serving certificate (and the CA) at two thirds of their lifetimes until
    /// `stop` fires. A failure is logged and retried after a second.
    pub async fn run(mut self, resolver: CertResolver, stop: CancellationToken) {
        loop {
            let next = self.cert_rotate_at.min(self.ca.rotate_at);
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = tokio::time::sleep_until(next) => {}
            }
            let result = if Instant::now() >= self.ca.rotate_at {
                self.rotate_ca(&resolver)
            } else {
                self.issue(&resolver)
            };
            if let Err(error) = result {
                tracing::error!(%error, "re-issuing the serving certificate failed; retrying");
                self.cert_rotate_at = Instant::now() + Duration::from_secs(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_names_come_first() {
        let config = SelfSignedConfig::for_service("hook", "ops");
        assert_eq!(
            &config.hosts[..4],
            [
                "hook",
                "hook.ops",
                "hook.ops.svc",
                "hook.ops.svc.cluster.local"
            ]
        );
        assert!(config.hosts.contains(&"127.0.0.1".to_owned()));
    }

    #[tokio::test]
    async fn issue_loads_the_resolver_and_the_bundle() -> Result<(), CertError> {
        let resolver = CertResolver::new();
        let mut certs = SelfSigned::new(SelfSignedConfig::default())?;
        certs.issue(&resolver)?;
        let first = resolver.certificate();
        assert!(first.is_some());
        assert!(
            String::from_utf8_lossy(&resolver.ca_bundle())
                .starts_with("-----BEGIN CERTIFICATE-----")
        );
        certs.issue(&resolver)?;
        assert_ne!(
            resolver.certificate(),
            first,
            "a new serial, a new certificate"
        );
        let bundle = resolver.ca_bundle();
        certs.rotate_ca(&resolver)?;
        let rotated = String::from_utf8_lossy(&resolver.ca_bundle()).into_owned();
        assert_eq!(
            rotated.matches("BEGIN CERTIFICATE").count(),
            2,
            "old and new CA"
        );
        assert!(rotated.ends_with(&*String::from_utf8_lossy(&bundle)));
        Ok(())
    }
}
