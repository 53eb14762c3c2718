//! Client certificates (kube-apiserver's `--client-ca-file`,
//! `staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go`): the TLS front
//! verifies a presented certificate against the client CA (a client without one is let
//! through, to be authenticated otherwise), and the verified certificate's subject names
//! the user — the common name is the user name, each organization a group
//! (`CommonNameUserConversion`), and the extra `authentication.kubernetes.io/credential-id`
//! is `X509SHA256=<hex fingerprint>`; a certificate without a common name names nobody.

use std::sync::Arc;

use rustls::{
    RootCertStore,
    pki_types::{CertificateDer, pem::PemObject},
    server::{WebPkiClientVerifier, danger::ClientCertVerifier},
};

use super::{AuthnError, UserInfo};

/// The user a verified client certificate (DER) names, or `None` when it has no common
/// name or does not parse.
pub(crate) fn user_of_certificate(der: &[u8]) -> Option<UserInfo> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .filter(|cn| !cn.is_empty())?
        .to_string();
    let groups: Vec<String> = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(str::to_string)
        .collect();
    let mut user = UserInfo::new(name, groups);
    let fingerprint = ring::digest::digest(&ring::digest::SHA256, der);
    let hex: String = fingerprint
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    user.extra.insert(
        super::service_account::CREDENTIAL_ID_KEY.into(),
        vec![format!("X509SHA256={hex}")],
    );
    Some(user)
}

/// The certificates of a PEM bundle (`--client-ca-file`'s contents).
pub(crate) fn parse_ca_bundle(
    source: &str,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, AuthnError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| AuthnError::ClientCa {
            source_name: source.to_string(),
            message: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(AuthnError::ClientCa {
            source_name: source.to_string(),
            message: "no certificate found".into(),
        });
    }
    Ok(certs)
}

/// A rustls verifier of client certificates signed by `cas` that lets clients without a
/// certificate through (kube-apiserver requests a certificate, `VerifyClientCertIfGiven`).
pub(crate) fn client_verifier(
    cas: &[CertificateDer<'static>],
) -> Result<Arc<dyn ClientCertVerifier>, AuthnError> {
    let mut roots = RootCertStore::empty();
    for ca in cas {
        roots.add(ca.clone()).map_err(|e| AuthnError::ClientCa {
            source_name: "client CA".into(),
            message: e.to_string(),
        })?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .allow_unauthenticated()
        .build()
        .map_err(|e| AuthnError::ClientCa {
            source_name: "client CA".into(),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's
    //! `staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509_test.go`
    //! (`TestX509` "common name", "empty dn").

    use rcgen::{CertificateParams, DnType, KeyPair};

    use super::*;

    fn cert(cn: Option<&str>, orgs: &[&str]) -> Vec<u8> {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        if let Some(cn) = cn {
            params.distinguished_name.push(DnType::CommonName, cn);
        }
        for o in orgs {
            params.distinguished_name.push(DnType::OrganizationName, *o);
        }
        let key = KeyPair::generate().expect("key");
        params.self_signed(&key).expect("cert").der().to_vec()
    }

    #[test]
    fn common_name_is_the_user_and_organizations_the_groups() {
        // (rcgen writes one attribute of a type: one organization.)
        let user = user_of_certificate(&cert(Some("alice"), &["devs"])).expect("user");
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["devs"]);
        let id = &user.extra["authentication.kubernetes.io/credential-id"][0];
        assert!(id.starts_with("X509SHA256=") && id.len() == 11 + 64, "{id}");
        assert_eq!(user_of_certificate(&cert(None, &["devs"])), None);
        assert_eq!(user_of_certificate(b"garbage"), None);
    }

    #[test]
    fn ca_bundles_parse_or_fail() {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = params.self_signed(&key).expect("ca");
        let certs = parse_ca_bundle("ca.pem", ca.pem().as_bytes()).expect("parses");
        assert_eq!(certs.len(), 1);
        assert!(client_verifier(&certs).is_ok());
        let err = parse_ca_bundle("ca.pem", b"nothing here").expect_err("empty");
        assert_eq!(err.to_string(), "client CA ca.pem: no certificate found");
    }
}
