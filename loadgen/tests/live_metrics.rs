//! The live metrics endpoint (`--metrics-listen`): a run serves its counters and cumulative
//! histograms while it runs, and a real Prometheus server (Debian's, where it is installed)
//! scraping two shards and the mock adds them into the plan's rate and the merged run's
//! percentiles.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use mock_upstream::{Config, MockServer};
use serde_json::Value;

mod common;

use common::{loadgen, precision_run, read_result, temp_dir};

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on `addr`: the status line and the body, or `None` when nothing answers.
fn get(addr: SocketAddr, path: &str) -> Option<(String, String)> {
    let mut tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    tcp.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        tcp,
        "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    tcp.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// The value of the first sample of `series` (its name and labels, as a prefix) on a page.
fn sample(page: &str, series: &str) -> Option<f64> {
    page.lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| l.starts_with(series))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

fn shard_run(target: &str, metrics: &str, extra: &[&str]) -> Command {
    let mut cmd = loadgen();
    cmd.args(["run", "--quiet", "--target", target])
        .args([
            "--connections",
            "8",
            "--timeout",
            "5s",
            "--metrics-listen",
            metrics,
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

#[test]
fn a_run_serves_its_counters_while_it_runs() {
    let mock = MockServer::start(Config::loopback()).unwrap();
    let dir = temp_dir("live");
    let target = format!("http://{}/v1/chat/completions", mock.local_addr());
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let out = dir.join("run.json");
    let mut child = shard_run(&target, &metrics.to_string(), &["--rate", "200"])
        .args([
            "--duration",
            "3s",
            "--scenario",
            "chat-stream",
            "--max-tokens",
            "4",
        ])
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    // Scraped about every 200 ms through the run: the counters only grow.
    let mut seen = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() && Instant::now() < until {
        if let Some((status, page)) = get(metrics, "/metrics") {
            assert!(status.contains("200"), "{status}");
            if let Some(ok) = sample(&page, "loadgen_ok_total{") {
                seen.push((ok, page));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = child.wait().unwrap();
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
    assert!(seen.len() >= 2, "scraped {} times", seen.len());
    assert!(
        seen.windows(2).all(|w| w[0].0 <= w[1].0),
        "a counter went down"
    );
    let (last_ok, page) = seen.last().unwrap();
    assert!(*last_ok > 0.0, "nothing answered while scraped");
    let labels = format!("target=\"{target}\",scenario=\"chat-stream\",shard=\"0/1\"");
    for series in [
        format!("loadgen_requests_total{{{labels}}}"),
        format!("loadgen_ttft_seconds_bucket{{{labels},le=\"+Inf\"}}"),
        format!("loadgen_schedule_lag_seconds_count{{{labels}}}"),
        format!("loadgen_response_time_seconds_sum{{{labels}}}"),
    ] {
        assert!(sample(page, &series).is_some(), "no {series} in\n{page}");
    }
    // Never more than the run recorded; and the endpoint ends with the run.
    let run = &read_result(&out)["runs"][0];
    assert!(*last_ok <= run["ok"].as_f64().unwrap());
    assert!(
        get(metrics, "/metrics").is_none(),
        "still served after the run"
    );
}

#[test]
fn a_taken_metrics_port_is_refused_before_any_load() {
    let mock = MockServer::start(Config::loopback()).unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let target = format!("http://{}/v1/chat/completions", mock.local_addr());
    let out = loadgen()
        .args(["run", "--target", &target])
        .args([
            "--rate",
            "10",
            "--duration",
            "1s",
            "--metrics-listen",
            &addr,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("--metrics-listen {addr}")), "{said}");
    let out = loadgen()
        .args(["run", "--rate", "10", "--metrics-listen", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid --metrics-listen 'nowhere'"));
}

#[test]
fn a_lingering_endpoint_serves_the_final_counts_after_the_run() {
    let mock = MockServer::start(Config::loopback()).unwrap();
    let dir = temp_dir("linger");
    let target = format!("http://{}/v1/chat/completions", mock.local_addr());
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let out = dir.join("run.json");
    let started = Instant::now();
    let mut child = shard_run(&target, &metrics.to_string(), &["--rate", "100"])
        .args(["--duration", "1s", "--metrics-linger", "2s"])
        .arg("--out")
        .arg(&out)
        .spawn()
        .unwrap();
    let mut last = None;
    let until = Instant::now() + Duration::from_secs(15);
    while child.try_wait().unwrap().is_none() && Instant::now() < until {
        if let Some((_, page)) = get(metrics, "/metrics") {
            let counts = (
                sample(&page, "loadgen_requests_total{"),
                sample(&page, "loadgen_ok_total{"),
            );
            if let (Some(requests), Some(ok)) = counts {
                last = Some((requests, ok));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().unwrap();
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
    // The run (1 s and its warm-up) and then 2 s more of serving, before the result is written.
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The last scrape came after the run: exactly the result's counts.
    let run = &read_result(&out)["runs"][0];
    let expected = (
        run["requests"].as_f64().unwrap(),
        run["ok"].as_f64().unwrap(),
    );
    assert_eq!(last, Some(expected));
    assert!(
        get(metrics, "/metrics").is_none(),
        "served after the linger"
    );
    // A linger without an endpoint, or not a duration, is refused before any load.
    for (flags, said) in [
        (&["--metrics-linger", "3s"][..], "give --metrics-listen too"),
        (
            &[
                "--metrics-listen",
                "127.0.0.1:0",
                "--metrics-linger",
                "soon",
            ][..],
            "--metrics-linger soon: expected a duration",
        ),
    ] {
        let out = loadgen()
            .args(["run", "--target", &target, "--rate", "10"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let told = String::from_utf8_lossy(&out.stderr);
        assert!(told.contains(said), "{told}");
    }
}

/// Prometheus, started on loopback with `config` in `dir`, stopped when dropped.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(dir: &std::path::Path, config: &str) -> Option<Prometheus> {
        let file = dir.join("prometheus.yml");
        std::fs::write(&file, config).unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let prometheus = Prometheus { child, addr };
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if get(addr, "/-/ready").is_some_and(|(s, _)| s.contains("200")) {
                return Some(prometheus);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("prometheus did not become ready at {addr}");
    }

    /// An instant query at `at` (Unix seconds): each series' value.
    fn query(&self, query: &str, at: f64) -> Vec<(Value, f64)> {
        let encoded: String = query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (status, body) = get(
            self.addr,
            &format!("/api/v1/query?query={encoded}&time={at}"),
        )
        .unwrap_or_else(|| panic!("prometheus did not answer {query}"));
        assert!(status.contains("200"), "{query}: {status} {body}");
        let value: Value = serde_json::from_str(&body).unwrap();
        value["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let v = r["value"][1].as_str().unwrap().parse().unwrap_or(f64::NAN);
                (r["metric"].clone(), v)
            })
            .collect()
    }
}

fn unix_s(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn prometheus_adds_two_shards_into_the_plans_rate_and_percentiles() {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no prometheus here (apt-get install prometheus)");
        return;
    }
    const RATE: f64 = 400.0;
    let mock = MockServer::start(Config::loopback()).unwrap();
    let dir = temp_dir("prometheus");
    let ports = [free_port(), free_port()];
    let config = format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: loadgen\n    static_configs:\n      - targets: ['127.0.0.1:{}', '127.0.0.1:{}']\n  - job_name: mock\n    static_configs:\n      - targets: ['{}']\n",
        ports[0],
        ports[1],
        mock.local_addr()
    );
    let Some(prometheus) = Prometheus::start(&dir, &config) else {
        eprintln!("skipped: prometheus does not start here");
        return;
    };
    let target = format!("http://{}/v1/chat/completions", mock.local_addr());
    // Ahead far enough for Prometheus to have scraped each endpoint before the first request.
    let start = SystemTime::now() + Duration::from_secs(4);
    let at = humantime::format_rfc3339_millis(start).to_string();
    let children: Vec<_> = (0..2)
        .map(|i| {
            shard_run(&target, &format!("127.0.0.1:{}", ports[i]), &[])
                .args(["--rate", &RATE.to_string(), "--duration", "8s"])
                .args(["--shard", &format!("{i}/2"), "--start-at", &at])
                .arg("--out")
                .arg(dir.join(format!("shard-{i}.json")))
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    }
    let merged = dir.join("merged.json");
    let out = loadgen()
        .arg("merge")
        .args([dir.join("shard-0.json"), dir.join("shard-1.json")])
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    let merged = read_result(&merged);

    // Both shards and the mock were scraped.
    let up = prometheus.query("up", unix_s(start) + 4.0);
    assert_eq!(up.len(), 3, "{up:?}");
    assert!(up.iter().all(|(_, v)| *v == 1.0), "{up:?}");
    // The rate Prometheus computes from the two shards' counters, over seconds 2 to 6. It is
    // there on any host; how near the plan's it is depends on when each scrape ran against how
    // far the shards had got, so it is the precision run's.
    let rate = prometheus.query("sum(rate(loadgen_requests_total[4s]))", unix_s(start) + 6.0);
    let rate = rate.first().map(|(_, v)| *v).unwrap();
    assert!(
        !precision_run() || (rate - RATE).abs() <= RATE * 0.02,
        "Prometheus' rate {rate} against {RATE}"
    );
    // Its median response time, from the added buckets at the last scrape, lies in the bucket
    // of the merged run's median.
    let quantile = prometheus.query(
        "histogram_quantile(0.5, sum by (le) (loadgen_response_time_seconds_bucket))",
        unix_s(start) + 8.0,
    );
    let estimate_us = quantile.first().map(|(_, v)| *v * 1e6).unwrap();
    let p50_us = merged["runs"][0]["metrics"]["response_time"]["p50"]
        .as_f64()
        .unwrap();
    let bounds = [
        0.0, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1e3, 2.5e3, 5e3, 1e4, 2.5e4,
        5e4, 1e5,
    ];
    eprintln!(
        "Prometheus: rate {rate:.1} req/s of {RATE}; p50 {estimate_us:.0} µs, merged {p50_us} µs"
    );
    // The last scrape misses the run's last second: 5% either side of the bucket.
    let upper = bounds.iter().position(|b| *b >= p50_us).unwrap();
    let (low, high) = (bounds[upper.saturating_sub(1)], bounds[upper]);
    assert!(
        (low * 0.95..=high * 1.05).contains(&estimate_us),
        "Prometheus' p50 {estimate_us:.0} µs outside the merged p50's bucket ({p50_us} µs in {low}-{high})"
    );
}

fn script(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(path)
}

#[test]
fn the_shipped_scrape_configuration_is_valid() {
    let Ok(out) = Command::new("promtool")
        .args(["check", "config"])
        .arg(script("prometheus/prometheus.yml"))
        .output()
    else {
        eprintln!("skipped: no promtool here (apt-get install prometheus)");
        return;
    };
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn the_dashboard_asks_only_for_series_loadgen_and_the_mock_serve() {
    let text = std::fs::read_to_string(script("grafana/gatebench-shards.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    let exprs: Vec<&str> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap())
        .map(|t| t["expr"].as_str().unwrap())
        .collect();
    assert!(exprs.len() >= 7, "{exprs:?}");
    // Every loadgen series asked for is on a page a run serves.
    let mock = MockServer::start(Config::loopback()).unwrap();
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let target = format!("http://{}/v1/chat/completions", mock.local_addr());
    let mut child = shard_run(&target, &metrics.to_string(), &["--rate", "50"])
        .args(["--duration", "2s"])
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let page = loop {
        // Once the run has begun: before it, the page has the families and no series.
        if let Some((_, page)) = get(metrics, "/metrics").filter(|(_, p)| p.contains("_total{")) {
            break page;
        }
        assert!(Instant::now() < until, "the run served nothing");
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.wait();
    for expr in exprs {
        for name in expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("loadgen_"))
        {
            // A series, or a family declared with none yet (no failure of any kind).
            let served =
                page.contains(&format!("\n{name}{{")) || page.contains(&format!("# TYPE {name} "));
            assert!(served, "{name} is not served:\n{page}");
        }
    }
}
