//! Reference gateways with a known behaviour, for measuring what a gateway does with traffic:
//! an HTTP/1.1 forwarder that retries a failed request once on the next upstream after a fixed
//! delay and, after K failures of one upstream, sends nothing to it for a cooldown; and one that answers
//! a request it has seen before from its cache. Whole (content-length) bodies only: the tests
//! of behaviour send non-streamed requests.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a reference gateway treats its upstreams.
#[derive(Debug, Clone)]
pub enum Behaviour {
    /// Sends to the first upstream still in use; an answer of 429 or 5xx, or a refused
    /// connection, is retried once on the next upstream after `retry_delay`; after `switch_after`
    /// failures of one upstream, that upstream gets nothing for `cooldown` (then its failures
    /// are forgotten and it is used again).
    Failover {
        retry_delay: Duration,
        switch_after: usize,
        cooldown: Duration,
    },
    /// Answers a body seen before from its cache; sends the rest to the first upstream.
    Cache,
}

/// What the gateway has done so far, for a test to compare with what was measured.
#[derive(Debug, Default)]
pub struct Tally {
    /// Failures seen per upstream since it was last put back in use.
    pub failures: Vec<usize>,
    /// When each upstream was last taken out of use.
    pub out_since: Vec<Option<std::time::Instant>>,
    /// Times an upstream was taken out of use.
    pub switches: usize,
    /// Requests answered from the cache.
    pub hits: usize,
}

/// Starts a reference gateway on `127.0.0.1:0` in front of `upstreams`; it lives until the
/// test process ends.
pub fn start_behaving(
    upstreams: Vec<SocketAddr>,
    behaviour: Behaviour,
) -> (SocketAddr, Arc<Mutex<Tally>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let tally = Arc::new(Mutex::new(Tally {
        failures: vec![0; upstreams.len()],
        out_since: vec![None; upstreams.len()],
        switches: 0,
        hits: 0,
    }));
    let cache: Arc<Mutex<HashMap<Vec<u8>, Vec<u8>>>> = Arc::default();
    let shared = tally.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let (upstreams, behaviour) = (upstreams.clone(), behaviour.clone());
            let (tally, cache) = (shared.clone(), cache.clone());
            std::thread::spawn(move || serve(client, &upstreams, &behaviour, &tally, &cache));
        }
    });
    (addr, tally)
}

/// One HTTP message: its head's lines and its body.
struct Request {
    head: Vec<String>,
    body: Vec<u8>,
}

fn serve(
    client: TcpStream,
    upstreams: &[SocketAddr],
    behaviour: &Behaviour,
    tally: &Mutex<Tally>,
    cache: &Mutex<HashMap<Vec<u8>, Vec<u8>>>,
) {
    let _ = client.set_nodelay(true);
    let Ok(mut writer) = client.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(client);
    while let Some(request) = read_message(&mut reader) {
        let answer = match behaviour {
            Behaviour::Cache => {
                let hit = cache
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&request.body)
                    .cloned();
                match hit {
                    Some(answer) => {
                        tally.lock().unwrap_or_else(|e| e.into_inner()).hits += 1;
                        Some(answer)
                    }
                    None => {
                        let answer = call(upstreams[0], &request).map(|(_, a)| a);
                        if let Some(a) = &answer {
                            cache
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .insert(request.body.clone(), a.clone());
                        }
                        answer
                    }
                }
            }
            Behaviour::Failover {
                retry_delay,
                switch_after,
                cooldown,
            } => failover(
                upstreams,
                &request,
                (*retry_delay, *switch_after, *cooldown),
                tally,
            ),
        };
        let answer = answer
            .unwrap_or_else(|| b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n".to_vec());
        if writer.write_all(&answer).is_err() {
            return;
        }
    }
}

fn failover(
    upstreams: &[SocketAddr],
    request: &Request,
    (retry_delay, switch_after, cooldown): (Duration, usize, Duration),
    tally: &Mutex<Tally>,
) -> Option<Vec<u8>> {
    let in_use = |i: usize| {
        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
        match t.out_since[i] {
            Some(since) if since.elapsed() >= cooldown => {
                t.out_since[i] = None;
                t.failures[i] = 0;
                true
            }
            Some(_) => false,
            None => true,
        }
    };
    let first = (0..upstreams.len()).find(|i| in_use(*i)).unwrap_or(0);
    let mut last = None;
    for (attempt, i) in (first..upstreams.len()).take(2).enumerate() {
        if attempt > 0 {
            std::thread::sleep(retry_delay);
        }
        match call(upstreams[i], request) {
            Some((status, answer)) if status != 429 && status < 500 => return Some(answer),
            other => {
                let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
                t.failures[i] += 1;
                if t.failures[i] >= switch_after && t.out_since[i].is_none() {
                    t.out_since[i] = Some(std::time::Instant::now());
                    t.switches += 1;
                }
                last = other.map(|(_, a)| a);
            }
        }
    }
    last
}

/// Sends `request` to `upstream` on a connection of its own: the answer's status and its
/// bytes, or `None` when the upstream could not be reached or answered nothing whole.
fn call(upstream: SocketAddr, request: &Request) -> Option<(u16, Vec<u8>)> {
    let mut stream = TcpStream::connect_timeout(&upstream, Duration::from_secs(2)).ok()?;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut out = Vec::new();
    for line in &request.head {
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("connection:") {
            continue;
        }
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"connection: close\r\n\r\n");
    out.extend_from_slice(&request.body);
    stream.write_all(&out).ok()?;
    let mut reader = BufReader::new(stream);
    let message = read_message(&mut reader)?;
    let status: u16 = message
        .head
        .first()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let mut answer = Vec::new();
    for line in &message.head {
        if !line.to_ascii_lowercase().starts_with("connection:") {
            answer.extend_from_slice(line.as_bytes());
            answer.extend_from_slice(b"\r\n");
        }
    }
    answer.extend_from_slice(b"\r\n");
    answer.extend_from_slice(&message.body);
    Some((status, answer))
}

/// The next request or answer on a connection: its head's lines (the first line first) and its
/// content-length body; `None` at the end of the connection.
fn read_message(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut head = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
        head.push(line);
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { head, body })
}
