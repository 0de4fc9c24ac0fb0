//! An upstream that records every request it is sent (when, path, sequence number, body) and
//! answers each with one fixed chat completion: to check what loadgen sent, byte for byte,
//! and when, against a server loadgen's authors did not write into loadgen.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One request as the upstream saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// When its head was read.
    pub at: Instant,
    pub path: String,
    /// Its `x-gatebench-seq`.
    pub seq: Option<u64>,
    pub body: Vec<u8>,
}

/// The requests seen so far.
pub type Log = Arc<Mutex<Vec<Seen>>>;

const ANSWER: &str = "{\"id\":\"r\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\
    \"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}";

/// How the upstream answers a request: after how long, and with what chat completion text.
pub type Answering = Arc<dyn Fn(&Seen) -> (std::time::Duration, String) + Send + Sync>;

/// Starts the recording upstream on `127.0.0.1:0`, a thread per connection; it lives until the
/// test process ends.
pub fn start_recording() -> (SocketAddr, Log) {
    start_recording_answering(Arc::new(|_| {
        (std::time::Duration::ZERO, ANSWER.to_string())
    }))
}

/// A recording upstream whose answer to each request `answer` picks (the delay, then the
/// whole JSON body).
pub fn start_recording_answering(answer: Answering) -> (SocketAddr, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let log: Log = Arc::default();
    let record = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let record = record.clone();
            let answer = answer.clone();
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let Ok(mut writer) = stream.try_clone() else {
                    return;
                };
                let mut reader = BufReader::new(stream);
                while let Some(seen) = read_request(&mut reader) {
                    let (delay, body) = answer(&seen);
                    record.lock().expect("log").push(seen);
                    std::thread::sleep(delay);
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: \
                         {}\r\n\r\n{body}",
                        body.len()
                    );
                    if writer.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, log)
}

fn read_request(reader: &mut impl BufRead) -> Option<Seen> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let at = Instant::now();
    let path = line.split(' ').nth(1)?.to_string();
    let (mut length, mut seq) = (0usize, None);
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok().filter(|n| *n > 0)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "x-gatebench-seq" => seq = value.trim().parse().ok(),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        at,
        path,
        seq,
        body,
    })
}
