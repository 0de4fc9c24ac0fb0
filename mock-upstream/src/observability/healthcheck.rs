//! `mock-upstream healthcheck`: asks a running mock's `GET /health` and exits 0 when it answers
//! 200, 1 otherwise. For a container's `HEALTHCHECK` (a minimal image has no curl): it reads the
//! same settings as the server (`MOCK_LISTEN`, `MOCK_TLS_NAMES`, `MOCK_TLS_CA_FILE`, or the
//! config file), so it finds the server without being told where.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{Config, TlsSettings};

/// Why the mock is not healthy.
#[derive(Debug, thiserror::Error)]
pub enum Unhealthy {
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("no answer from {addr} within {timeout:?}: {source}")]
    Io {
        addr: SocketAddr,
        timeout: Duration,
        source: std::io::Error,
    },
    #[error("TLS with {addr} failed: {message}")]
    Tls { addr: SocketAddr, message: String },
    #[error("{addr} answered /health with: {line}")]
    Status { addr: SocketAddr, line: String },
}

/// The address to ask: the listen address, with an unspecified IP (`0.0.0.0`, `::`) replaced
/// by the loopback of its family.
pub fn target(listen: SocketAddr) -> SocketAddr {
    let mut addr = listen;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    addr
}

/// Asks `GET /health` of the mock `config` describes, within `timeout`.
pub fn check(config: &Config, timeout: Duration) -> Result<(), Unhealthy> {
    let addr = target(config.listen);
    let deadline = Instant::now() + timeout;
    let stream = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|source| Unhealthy::Connect { addr, source })?;
    let io = |source| Unhealthy::Io {
        addr,
        timeout,
        source,
    };
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    stream.set_read_timeout(Some(left)).map_err(io)?;
    stream.set_write_timeout(Some(left)).map_err(io)?;
    let request = b"GET /health HTTP/1.1\r\nhost: mock\r\nconnection: close\r\n\r\n";
    let answer = match &config.tls {
        None => exchange(stream, request).map_err(io)?,
        Some(tls) => {
            let client = tls_client(tls, addr)?;
            let stream = rustls::StreamOwned::new(client, stream);
            exchange(stream, request).map_err(io)?
        }
    };
    let line = answer.lines().next().unwrap_or("").to_string();
    if line.starts_with("HTTP/1.1 200") {
        Ok(())
    } else {
        Err(Unhealthy::Status { addr, line })
    }
}

fn exchange(mut stream: impl Read + Write, request: &[u8]) -> std::io::Result<String> {
    stream.write_all(request)?;
    stream.flush()?;
    let mut answer = Vec::new();
    // The server closes after the answer (`connection: close`); a health answer is small.
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            // A TLS peer that closes without close_notify still sent its whole answer.
            Err(e) if !answer.is_empty() && e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
        if answer.len() > 64 * 1024 {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// A TLS client trusting only the mock's CA file, for the first of its certificate's names.
fn tls_client(tls: &TlsSettings, addr: SocketAddr) -> Result<rustls::ClientConnection, Unhealthy> {
    let fail = |message: String| Unhealthy::Tls { addr, message };
    let pem = std::fs::read_to_string(&tls.ca_file)
        .map_err(|e| fail(format!("cannot read {}: {e}", tls.ca_file.display())))?;
    let mut roots = rustls::RootCertStore::empty();
    for der in pem_certificates(&pem) {
        roots
            .add(rustls::pki_types::CertificateDer::from(der))
            .map_err(|e| fail(e.to_string()))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(tls.names[0].clone())
        .map_err(|e| fail(e.to_string()))?;
    rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| fail(e.to_string()))
}

/// The DER bytes of each certificate in a PEM text.
fn pem_certificates(pem: &str) -> Vec<Vec<u8>> {
    use base64::Engine as _;
    let mut out = Vec::new();
    let mut body = String::new();
    let mut inside = false;
    for line in pem.lines() {
        match line.trim() {
            "-----BEGIN CERTIFICATE-----" => {
                inside = true;
                body.clear();
            }
            "-----END CERTIFICATE-----" => {
                inside = false;
                if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(&body) {
                    out.push(der);
                }
            }
            text if inside => body.push_str(text),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_listen_address_is_asked_on_loopback() {
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(target(any), "127.0.0.1:8080".parse().unwrap());
        let any6: SocketAddr = "[::]:9000".parse().unwrap();
        assert_eq!(target(any6), "[::1]:9000".parse().unwrap());
        let given: SocketAddr = "127.0.0.2:1".parse().unwrap();
        assert_eq!(target(given), given);
    }

    #[test]
    fn nothing_listening_is_unhealthy() {
        // Port 9 (discard) is not served on loopback here.
        let config = Config {
            listen: "127.0.0.1:9".parse().unwrap(),
            ..Config::default()
        };
        let err = check(&config, Duration::from_millis(500)).unwrap_err();
        assert!(err.to_string().contains("cannot connect"), "{err}");
    }
}
