//! How a worker reaches a target: a TCP connection, with TLS over it for `https://` targets
//! (rustls), speaking HTTP/1.1 or, with `--http2`, HTTP/2 (by ALPN over TLS, by prior knowledge
//! in the clear). Opening a connection is timed in two parts, the TCP connect and the TLS
//! handshake, so a handshake is reported on its own and never hides in a reused connection's
//! request.

mod stream;
mod tls;

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use gatebench_shared::clock::monotonic_ns;
use hdrhistogram::Histogram;
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use serde::Serialize;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::wire::connect_to::ConnectTo;
pub use stream::Stream;
pub use tls::TlsSetupError;

use crate::model::target::Target;
use crate::wire::outcome::ErrorKind;

/// The HTTP version and TLS settings of a run, shared by all its connections.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Transport {
    /// HTTP/2 instead of HTTP/1.1.
    pub http2: bool,
    /// Trust only the certificates of this PEM file (`--cacert`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cacert: Option<PathBuf>,
    /// Check no certificate (`--insecure`).
    pub insecure: bool,
    /// `--connect-to` rules.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connect_to: Vec<ConnectTo>,
    /// The TLS client, built at the first TLS connection (or by [`Transport::check_tls`]).
    #[serde(skip)]
    tls: Arc<OnceLock<Result<Arc<ClientConfig>, TlsSetupError>>>,
}

/// One connection opened: how long each part took, and what TLS agreed.
#[derive(Debug, Clone, Copy)]
pub struct Dial {
    pub tcp_ns: u64,
    /// `None` in the clear.
    pub tls_ns: Option<u64>,
}

impl Transport {
    pub fn new(
        http2: bool,
        cacert: Option<PathBuf>,
        insecure: bool,
        connect_to: Vec<ConnectTo>,
    ) -> Self {
        Transport {
            http2,
            cacert,
            insecure,
            connect_to,
            tls: Arc::default(),
        }
    }

    /// The protocol's name as results give it.
    pub fn protocol(&self) -> &'static str {
        if self.http2 {
            "HTTP/2"
        } else {
            "HTTP/1.1"
        }
    }

    /// Builds the TLS client now, so a bad `--cacert` is reported before any load.
    pub fn check_tls(&self) -> Result<(), TlsSetupError> {
        self.tls_client().map(|_| ())
    }

    fn tls_client(&self) -> Result<Arc<ClientConfig>, TlsSetupError> {
        self.tls
            .get_or_init(|| tls::client_config(self.cacert.as_deref(), self.insecure, self.http2))
            .clone()
    }

    /// Opens a connection to `target`: TCP, then TLS for an `https://` target. The caller
    /// bounds it with its timeout.
    pub async fn connect(&self, target: &Target) -> Result<(Stream, Dial), ConnectError> {
        let started = monotonic_ns();
        let tcp = TcpStream::connect(target.resolved)
            .await
            .map_err(|e| ConnectError::Tcp(connect_error(&e)))?;
        let _ = tcp.set_nodelay(true);
        let connected = monotonic_ns();
        let tcp_ns = connected.saturating_sub(started);
        if !target.tls {
            return Ok((
                Stream::Tcp(tcp),
                Dial {
                    tcp_ns,
                    tls_ns: None,
                },
            ));
        }
        let client = self
            .tls_client()
            .map_err(|e| ConnectError::Tls(e.to_string()))?;
        let name = ServerName::try_from(target.host().to_string())
            .map_err(|e| ConnectError::Tls(format!("server name '{}': {e}", target.host())))?;
        let tls = TlsConnector::from(client)
            .connect(name, tcp)
            .await
            .map_err(|e| ConnectError::Tls(e.to_string()))?;
        let stream = Stream::Tls(Box::new(tls));
        if self.http2 && stream.alpn() != Some(b"h2") {
            return Err(ConnectError::Tls(
                "the server did not agree to HTTP/2 (ALPN h2); leave out --http2".into(),
            ));
        }
        let tls_ns = Some(monotonic_ns().saturating_sub(connected));
        Ok((stream, Dial { tcp_ns, tls_ns }))
    }
}

/// Why a connection could not be opened.
#[derive(Debug, Clone)]
pub enum ConnectError {
    Tcp(ErrorKind),
    /// The TLS handshake failed, with rustls's reason.
    Tls(String),
}

impl ConnectError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            ConnectError::Tcp(kind) => *kind,
            ConnectError::Tls(_) => ErrorKind::Tls,
        }
    }
}

fn connect_error(err: &io::Error) -> ErrorKind {
    match err.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
        io::ErrorKind::TimedOut => ErrorKind::ConnectTimeout,
        _ => ErrorKind::Connect,
    }
}

/// The connections a worker opened: how long their TCP connects and TLS handshakes took (µs),
/// and the first TLS failure's reason.
#[derive(Debug, Clone)]
pub struct Dials {
    pub tcp_us: Histogram<u64>,
    pub tls_us: Histogram<u64>,
    pub tls_error: Option<String>,
}

impl Default for Dials {
    fn default() -> Self {
        Dials {
            tcp_us: dial_histogram(),
            tls_us: dial_histogram(),
            tls_error: None,
        }
    }
}

fn dial_histogram() -> Histogram<u64> {
    // Invariant: 1 µs to 1 hour at 3 significant digits is a valid histogram.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}

impl Dials {
    pub fn record(&mut self, dial: Dial) {
        self.tcp_us.saturating_record((dial.tcp_ns / 1_000).max(1));
        if let Some(ns) = dial.tls_ns {
            self.tls_us.saturating_record((ns / 1_000).max(1));
        }
    }

    pub fn failed(&mut self, err: &ConnectError) {
        if let (ConnectError::Tls(why), None) = (err, &self.tls_error) {
            self.tls_error = Some(why.clone());
        }
    }

    pub fn merge(&mut self, other: &Dials) {
        let _ = self.tcp_us.add(&other.tcp_us);
        let _ = self.tls_us.add(&other.tls_us);
        if self.tls_error.is_none() {
            self.tls_error.clone_from(&other.tls_error);
        }
    }
}
