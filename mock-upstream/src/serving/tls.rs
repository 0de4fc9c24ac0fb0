//! `--tls-names`: TLS (rustls) with a certificate generated at start.
//!
//! A throwaway CA is generated, the server certificate for the given names (DNS names or IP
//! addresses, e.g. `api.openai.com,localhost,127.0.0.1`) is signed by it, and the CA's PEM is
//! written to `--tls-ca-file`. A client that trusts that file and resolves the name to the mock
//! (a hosts entry, `curl --resolve`) talks to it as to the real provider. ALPN offers `h2` and
//! `http/1.1`. Keys live only in memory and change at every start.

use std::path::Path;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::config::TlsSettings;

/// TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot generate the TLS certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("cannot set up TLS: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("cannot write the CA certificate to {path}: {source}")]
    WriteCa {
        path: String,
        source: std::io::Error,
    },
}

/// Generates the CA and the server certificate, writes the CA's PEM, and returns the acceptor.
pub fn acceptor(settings: &TlsSettings) -> Result<TlsAcceptor, TlsError> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "gatebench mock-upstream CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;

    let key = KeyPair::generate()?;
    // IP addresses among the names become IP subject alternative names.
    let mut server = CertificateParams::new(settings.names.clone())?;
    server
        .distinguished_name
        .push(DnType::CommonName, settings.names[0].as_str());
    let cert = server.signed_by(&key, &ca_cert, &ca_key)?;

    write_ca(&settings.ca_file, &ca_cert.pem())?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn write_ca(path: &Path, pem: &str) -> Result<(), TlsError> {
    let err = |source| TlsError::WriteCa {
        path: path.display().to_string(),
        source,
    };
    // Written beside and renamed, so a client never reads half a file.
    let tmp = path.with_extension("pem.tmp");
    std::fs::write(&tmp, pem).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_ca_that_parses_and_builds_an_acceptor() {
        let dir = std::env::temp_dir().join(format!("gatebench-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_file = dir.join("ca.pem");
        let settings = TlsSettings {
            names: vec!["api.openai.com".into(), "127.0.0.1".into()],
            ca_file: ca_file.clone(),
        };
        acceptor(&settings).unwrap();
        let pem = std::fs::read_to_string(&ca_file).unwrap();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
