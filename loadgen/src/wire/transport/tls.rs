//! The TLS client (rustls): the certificates it trusts (`--cacert`, else the system's; none
//! checked with `--insecure`; a self-signed server certificate given in `--cacert` trusted as
//! it is) and the protocol it offers by ALPN (`h2` with `--http2`, else
//! `http/1.1`).

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Why the TLS client could not be set up.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TlsSetupError {
    #[error("cannot read --cacert {0}: {1}")]
    CaFile(String, String),
    #[error("--cacert {0} holds no PEM certificate")]
    NoCertificate(String),
    #[error("no trusted certificates: the system store gave none ({0}); give --cacert FILE, or --insecure to check none")]
    NoRoots(String),
    #[error("cannot set up TLS: {0}")]
    Rustls(String),
}

/// A client configuration for every TLS connection of a run.
pub fn client_config(
    cacert: Option<&Path>,
    insecure: bool,
    http2: bool,
) -> Result<Arc<ClientConfig>, TlsSetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
    // --insecure checks no chain; otherwise a chain to --cacert's (or the system's) roots.
    let (chain, given) = if insecure {
        (None, Vec::new())
    } else {
        let (roots, given) = match cacert {
            Some(path) => {
                let given = certificates_in(path)?;
                (roots_of(path, &given)?, given)
            }
            None => (system_roots()?, Vec::new()),
        };
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
        (Some(webpki), given)
    };
    let trust = Trust {
        chain,
        given,
        algorithms: provider.signature_verification_algorithms,
    };
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(trust))
        .with_no_client_auth();
    config.alpn_protocols = vec![if http2 {
        b"h2".to_vec()
    } else {
        b"http/1.1".to_vec()
    }];
    Ok(Arc::new(config))
}

fn certificates_in(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let shown = path.display().to_string();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| TlsSetupError::CaFile(shown.clone(), e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsSetupError::CaFile(shown.clone(), e.to_string()))?;
    if certs.is_empty() {
        return Err(TlsSetupError::NoCertificate(shown));
    }
    Ok(certs)
}

fn roots_of(
    path: &Path,
    certs: &[CertificateDer<'static>],
) -> Result<RootCertStore, TlsSetupError> {
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots
            .add(cert.clone())
            .map_err(|e| TlsSetupError::CaFile(path.display().to_string(), e.to_string()))?;
    }
    Ok(roots)
}

fn system_roots() -> Result<RootCertStore, TlsSetupError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    // Unparsable certificates in the store are skipped, as browsers do.
    let _ = roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let why = match found.errors.first() {
            Some(err) => err.to_string(),
            None => "it is empty".into(),
        };
        return Err(TlsSetupError::NoRoots(why));
    }
    Ok(roots)
}

/// Which server certificates a run trusts. With a `chain` check: a chain to a trusted
/// certificate, valid for the URL's name, or a server certificate that is itself one of
/// `--cacert`'s, as OpenSSL (curl, wrk) accepts a self-signed certificate given as trusted
/// (`openssl req -x509` makes them with `CA:TRUE`, which the chain check refuses as an end
/// entity). Without one (`--insecure`): any certificate. The handshake's signatures are checked
/// either way, so the session is encrypted as with a trusted server.
#[derive(Debug)]
struct Trust {
    chain: Option<Arc<WebPkiServerVerifier>>,
    given: Vec<CertificateDer<'static>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Trust {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(_) if self.given.iter().any(|c| c.as_ref() == end_entity.as_ref()) => {
                Ok(ServerCertVerified::assertion())
            }
            checked => checked,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_empty_ca_file_is_refused_by_name() {
        let missing = client_config(Some(Path::new("/nonexistent/ca.pem")), false, false);
        assert!(matches!(missing, Err(TlsSetupError::CaFile(..))));
        let dir = std::env::temp_dir().join(format!("loadgen-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let err = client_config(Some(&empty), false, false).unwrap_err();
        assert!(matches!(err, TlsSetupError::NoCertificate(_)), "{err}");
        assert!(err.to_string().contains("empty.pem"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_self_signed_server_certificate_given_as_trusted_is_accepted_and_no_other() {
        let self_signed = |is_ca| {
            let key = rcgen::KeyPair::generate().unwrap();
            let mut params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
            if is_ca {
                params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            }
            CertificateDer::from(params.self_signed(&key).unwrap().der().to_vec())
        };
        // As `openssl req -x509` makes them: CA:TRUE, which a chain check refuses as a server's.
        let given = self_signed(true);
        let other = self_signed(true);
        let mut roots = RootCertStore::empty();
        roots.add(given.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .unwrap();
        let verifier = Trust {
            chain: Some(webpki),
            given: vec![given.clone()],
            algorithms: provider.signature_verification_algorithms,
        };
        let name = ServerName::try_from("localhost").unwrap();
        let check = |cert: &CertificateDer<'_>| {
            verifier.verify_server_cert(cert, &[], &name, &[], UnixTime::now())
        };
        assert!(check(&given).is_ok());
        assert!(check(&other).is_err());
    }

    #[test]
    fn alpn_offers_the_chosen_protocol_only() {
        let h1 = client_config(None, true, false).unwrap();
        assert_eq!(h1.alpn_protocols, vec![b"http/1.1".to_vec()]);
        let h2 = client_config(None, true, true).unwrap();
        assert_eq!(h2.alpn_protocols, vec![b"h2".to_vec()]);
    }
}
