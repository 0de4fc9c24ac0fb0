//! HTTP/2 on the same port as HTTP/1.1 (h2c with prior knowledge), and TLS with a certificate
//! generated at start for the names asked for, trusted through the CA file the mock writes.

use std::sync::Arc;

use bytes::Bytes;
use gatebench_tests::{chat_body, start_mock};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::json;
use tokio::net::TcpStream;

fn chat_request(host: &str, body: &serde_json::Value, fault: Option<&str>) -> Request<Full<Bytes>> {
    let mut request = Request::post(format!("https://{host}/v1/chat/completions"))
        .header("content-type", "application/json");
    if let Some(fault) = fault {
        request = request.header("x-mock-fault", fault);
    }
    request
        .body(Full::new(Bytes::from(serde_json::to_vec(body).unwrap())))
        .unwrap()
}

async fn h2_sender<T>(io: T) -> hyper::client::conn::http2::SendRequest<Full<Bytes>>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .unwrap();
    tokio::spawn(conn);
    sender
}

#[tokio::test]
async fn h2c_with_prior_knowledge_shares_the_port_with_http1() {
    let mock = start_mock(mock_upstream::Config::default());
    let stream = TcpStream::connect(mock.local_addr()).await.unwrap();
    let mut h2 = h2_sender(stream).await;
    // Several streams at once on one connection.
    let mut answers = Vec::new();
    for _ in 0..8 {
        let request = chat_request("mock", &chat_body(true, json!({"max_tokens": 3})), None);
        answers.push(h2.send_request(request));
    }
    for answer in answers {
        let response = answer.await.unwrap();
        assert_eq!(response.version(), Version::HTTP_2);
        assert_eq!(response.status(), 200);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&body);
        assert_eq!(text.matches("data: ").count(), 6, "{text}");
        assert!(text.ends_with("data: [DONE]\n\n"));
    }
    // A reset on HTTP/2 ends that stream only; the connection carries on.
    let broken = h2
        .send_request(chat_request(
            "mock",
            &chat_body(true, json!({})),
            Some("reset@2"),
        ))
        .await
        .unwrap();
    assert!(broken.into_body().collect().await.is_err());
    let r = h2
        .send_request(chat_request("mock", &chat_body(false, json!({})), None))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // HTTP/1.1 on the same port, as before.
    let mut client = gatebench_tests::Client::connect(mock.local_addr()).await;
    assert_eq!(
        client.chat(&chat_body(false, json!({})), &[]).await.status,
        200
    );
    assert_eq!(mock.metrics().connections_opened(), 2);
}

#[tokio::test]
async fn tls_serves_the_asked_names_with_a_ca_the_client_can_trust() {
    let dir = std::env::temp_dir().join(format!("gatebench-tls-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("mock-ca.pem");
    let config = mock_upstream::RawSettings {
        tls_names: Some("api.openai.com,localhost".into()),
        tls_ca_file: Some(ca_file.display().to_string()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    let mock = start_mock(config);

    // Trust only the CA the mock wrote.
    let pem = std::fs::read(&ca_file).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    let der = pem_to_der(&pem);
    roots
        .add(rustls::pki_types::CertificateDer::from(der))
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let connect = |alpn: &[&[u8]]| {
        let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots.clone())
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        tokio_rustls::TlsConnector::from(Arc::new(config))
    };
    let name = rustls::pki_types::ServerName::try_from("api.openai.com").unwrap();

    // HTTP/2 by ALPN, as the official SDKs' clients may negotiate.
    let tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
    let tls = connect(&[b"h2"]).connect(name.clone(), tcp).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut h2 = h2_sender(tls).await;
    let r = h2
        .send_request(chat_request(
            "api.openai.com",
            &chat_body(false, json!({})),
            None,
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body = r.into_body().collect().await.unwrap().to_bytes();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["object"], "chat.completion");

    // HTTP/1.1 by ALPN.
    let tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
    let tls = connect(&[b"http/1.1"]).connect(name, tcp).await.unwrap();
    let (mut h1, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut request = chat_request("api.openai.com", &chat_body(false, json!({})), None);
    request
        .headers_mut()
        .insert("host", "api.openai.com".parse().unwrap());
    let r = h1.send_request(request).await.unwrap();
    assert_eq!(r.version(), Version::HTTP_11);
    assert_eq!(r.status(), 200);

    // A name the certificate was not made for is refused by the client.
    let tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
    let other = rustls::pki_types::ServerName::try_from("api.anthropic.com").unwrap();
    assert!(connect(&[b"http/1.1"]).connect(other, tcp).await.is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The DER bytes of the first certificate in a PEM file.
fn pem_to_der(pem: &[u8]) -> Vec<u8> {
    use base64::Engine;
    let text = String::from_utf8_lossy(pem);
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .unwrap()
}
