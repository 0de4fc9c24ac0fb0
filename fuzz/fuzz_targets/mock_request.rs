//! Arbitrary bytes sent to a running mock as a client's whole side of a connection (the
//! request line, headers, `x-mock-*` overrides, body), then a half-close: every route, the
//! header scan, the body parsers, faults and tool calls. A panic in any mock thread aborts
//! the process, which the fuzzer reports.

#![no_main]

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mock_upstream::{Config, MockServer, RawSettings};

fn mock() -> SocketAddr {
    static MOCK: OnceLock<MockServer> = OnceLock::new();
    MOCK.get_or_init(|| {
        let settings = RawSettings {
            listen: Some("127.0.0.1:0".into()),
            threads: Some(1),
            header_timeout: Some("200ms".into()),
            body_timeout: Some("200ms".into()),
            tool_calls: Some("50%".into()),
            fault: vec!["429:1%".into(), "chat:reset@2:1%".into()],
            rate_limit: Some("rpm=100000000,tpm=1000000000".into()),
            prompt_cache: Some("on".into()),
            ..RawSettings::default()
        };
        let config: Config = settings.validate().expect("valid settings");
        MockServer::start(config).expect("the mock starts on loopback")
    })
    .local_addr()
}

fuzz_target!(|data: &[u8]| {
    let mut tcp = TcpStream::connect(mock()).expect("the mock accepts");
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = tcp.write_all(data);
    let _ = tcp.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
});
