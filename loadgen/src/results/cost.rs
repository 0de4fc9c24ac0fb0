//! A modeled cost (`--price`): what serving a million requests would cost on instances of a
//! price the user gives, from the CPU, peak RSS and throughput measured. A model, never a
//! measurement: it assumes the load divides across instances without loss and that one
//! instance's CPU or memory, whichever runs out first, bounds it.
//!
//! - `Price`: an instance's hourly price, cores and memory, parsed from `0.166/h,4cpu,16GiB`.
//! - `CostModel`: instances needed, dollars per million requests and requests per dollar,
//!   with every input beside them; `model` computes it, `describe` says it in one line.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An instance's price and size, as the user gave them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Dollars an hour.
    pub hourly_usd: f64,
    /// CPU cores (vCPUs).
    pub cores: f64,
    /// Memory, bytes.
    pub memory_bytes: u64,
}

/// A `--price` that does not parse; the message names the part that is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "invalid --price '{text}': {why}; expected an hourly price, cores and memory, like \
     0.166/h,4cpu,16GiB"
)]
pub struct PriceError {
    pub text: String,
    pub why: String,
}

/// Memory units, by suffix (lowercase).
const MEMORY_UNITS: [(&str, f64); 6] = [
    ("tib", (1u64 << 40) as f64),
    ("gib", (1u64 << 30) as f64),
    ("mib", (1u64 << 20) as f64),
    ("tb", 1e12),
    ("gb", 1e9),
    ("mb", 1e6),
];
/// Suffixes of a count of cores, longest first.
const CORE_UNITS: [&str; 6] = ["vcpus", "vcpu", "cpus", "cpu", "cores", "core"];
/// Suffixes of an hourly price.
const HOUR_UNITS: [&str; 3] = ["/hour", "/hr", "/h"];

impl FromStr for Price {
    type Err = PriceError;

    /// Parses `0.166/h,4cpu,16GiB`, its parts in any order: the price with an optional `$`;
    /// cores as `cpu`, `cpus`, `vcpu`, `cores`; memory in TiB, GiB, MiB, TB, GB or MB; spaces
    /// allowed before a unit. Each must be above zero.
    fn from_str(text: &str) -> Result<Price, PriceError> {
        let fail = |why: String| PriceError {
            text: text.to_string(),
            why,
        };
        let (mut hourly, mut cores, mut memory) = (None, None, None);
        for part in text.split(',').map(str::trim) {
            let (slot, value, what) = match part_kind(part).map_err(fail)? {
                Part::Hourly(v) => (&mut hourly, v, "an hourly price"),
                Part::Cores(v) => (&mut cores, v, "cores"),
                Part::Memory(v) => (&mut memory, v, "memory"),
            };
            if slot.replace(value).is_some() {
                return Err(fail(format!("it gives {what} twice")));
            }
        }
        let need =
            |slot: Option<f64>, what: &str| slot.ok_or_else(|| fail(format!("it gives no {what}")));
        Ok(Price {
            hourly_usd: need(hourly, "hourly price (like 0.166/h)")?,
            cores: need(cores, "cores (like 4cpu)")?,
            memory_bytes: need(memory, "memory (like 16GiB)")?.round() as u64,
        })
    }
}

/// One part of a `--price`, its number in dollars an hour, cores or bytes.
enum Part {
    Hourly(f64),
    Cores(f64),
    Memory(f64),
}

/// What a part of a `--price` is, by its unit.
fn part_kind(part: &str) -> Result<Part, String> {
    let lower = part.to_ascii_lowercase();
    let strip = |units: &[&str]| units.iter().find_map(|u| lower.strip_suffix(u));
    if let Some(number) = strip(&HOUR_UNITS) {
        let number = number.trim().strip_prefix('$').unwrap_or(number);
        return positive(part, number, 1.0).map(Part::Hourly);
    }
    if let Some(number) = strip(&CORE_UNITS) {
        return positive(part, number, 1.0).map(Part::Cores);
    }
    for (unit, bytes) in MEMORY_UNITS {
        if let Some(number) = lower.strip_suffix(unit) {
            let value = positive(part, number, bytes)?;
            if value < 1.0 {
                return Err(format!("'{part}' is less than a byte"));
            }
            return Ok(Part::Memory(value));
        }
    }
    Err(format!(
        "'{part}' is not an hourly price (0.166/h), cores (4cpu) or memory (16GiB, 512MiB)"
    ))
}

/// `number` (of `part`) times `unit`, when it is a finite number above zero.
fn positive(part: &str, number: &str, unit: f64) -> Result<f64, String> {
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * unit),
        Ok(_) => Err(format!("'{part}' must be above zero")),
        Err(_) => Err(format!("'{part}' does not start with a number")),
    }
}

impl fmt::Display for Price {
    /// `$0.166/h, 4 cores, 16 GiB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "${}/h, {} cores, {}",
            significant(self.hourly_usd),
            significant(self.cores),
            bytes_text(self.memory_bytes as f64)
        )
    }
}

/// The modeled cost of a run, with every input it was computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// Always true: this is a model, not a measurement.
    pub modeled: bool,
    pub price: Price,
    /// CPU cores the gateway used on average under the load.
    pub mean_cpu_cores: f64,
    /// Its peak resident set, bytes.
    pub peak_rss_bytes: u64,
    /// The throughput measured, requests a second.
    pub throughput_rps: f64,
    /// Instances needed: the larger of mean cores ÷ the instance's cores and peak RSS ÷ its
    /// memory, fractional (not rounded up to whole instances), as if the load divided freely.
    pub instances: f64,
    /// `cpu` or `memory`: which of the two ratios set `instances`.
    pub bound_by: String,
    /// instances × hourly price ÷ (throughput × 3,600) × 10⁶.
    pub usd_per_million_requests: f64,
    /// 10⁶ ÷ `usd_per_million_requests`.
    pub requests_per_usd: f64,
}

/// The cost of serving `throughput_rps` on instances at `price`, when the gateway used
/// `mean_cpu_cores` and at most `peak_rss_bytes`. `None` when there is no throughput or
/// nothing was used (no model can be made of either).
pub fn model(
    price: &Price,
    mean_cpu_cores: f64,
    peak_rss_bytes: u64,
    throughput_rps: f64,
) -> Option<CostModel> {
    if !(throughput_rps.is_finite() && throughput_rps > 0.0 && mean_cpu_cores.is_finite()) {
        return None;
    }
    let by_cpu = mean_cpu_cores.max(0.0) / price.cores;
    let by_memory = peak_rss_bytes as f64 / price.memory_bytes as f64;
    let instances = by_cpu.max(by_memory);
    if !(instances.is_finite() && instances > 0.0) {
        return None;
    }
    let usd_per_million_requests = instances * price.hourly_usd / (throughput_rps * 3600.0) * 1e6;
    Some(CostModel {
        modeled: true,
        price: *price,
        mean_cpu_cores,
        peak_rss_bytes,
        throughput_rps,
        instances,
        bound_by: if by_cpu >= by_memory { "cpu" } else { "memory" }.to_string(),
        usd_per_million_requests,
        requests_per_usd: 1e6 / usd_per_million_requests,
    })
}

impl CostModel {
    /// One line with the figures, every input and the word "modeled": "modeled, not measured:
    /// 0.00249 $ per million requests (402 M requests per $) = 0.27 instances (bound by CPU:
    /// 1.08 of 4 cores; peak RSS 210 MiB of 16 GiB) × $0.166/h ÷ 5,000 req/s".
    pub fn describe(&self) -> String {
        let bound = if self.bound_by == "memory" {
            "memory"
        } else {
            "CPU"
        };
        format!(
            "modeled, not measured: {} $ per million requests ({} M requests per $) = {} \
             instances (bound by {bound}: {} of {} cores; peak RSS {} of {}) × ${}/h ÷ {} req/s",
            significant(self.usd_per_million_requests),
            significant(self.requests_per_usd / 1e6),
            significant(self.instances),
            significant(self.mean_cpu_cores),
            significant(self.price.cores),
            bytes_text(self.peak_rss_bytes as f64),
            bytes_text(self.price.memory_bytes as f64),
            significant(self.price.hourly_usd),
            significant(self.throughput_rps),
        )
    }
}

/// A number to three significant figures, trailing zeros dropped, thousands separated:
/// `0.00249`, `1.08`, `4`, `402`, `5,000`.
fn significant(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let digits = x.abs().log10().floor() as i32;
    let decimals = (2 - digits).max(0) as usize;
    let text = format!("{x:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let (sign, whole) = whole.strip_prefix('-').map_or(("", whole), |w| ("-", w));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if fraction.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{fraction}")
    }
}

/// Bytes in binary units to three significant figures: `210 MiB`, `16 GiB`.
fn bytes_text(bytes: f64) -> String {
    let units = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in units {
        let size = (1u64 << shift) as f64;
        if bytes >= size {
            return format!("{} {unit}", significant(bytes / size));
        }
    }
    format!("{} bytes", significant(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    fn price(text: &str) -> Price {
        text.parse().unwrap()
    }

    #[test]
    fn a_price_parses_in_its_spellings() {
        let want = Price {
            hourly_usd: 0.166,
            cores: 4.0,
            memory_bytes: 16 * GIB,
        };
        assert_eq!(price("0.166/h,4cpu,16GiB"), want);
        assert_eq!(price("$0.166/h, 4 cpu, 16 GiB"), want);
        assert_eq!(price("16gib,4vcpu,$0.166/h"), want);
        assert_eq!(price("0.166/h,4cpus,16384MiB"), want);
        let decimal = price("0.5/h,0.5cpu,2GB");
        assert_eq!((decimal.cores, decimal.memory_bytes), (0.5, 2_000_000_000));
        assert_eq!(price("1/h,1cpu,512MB").memory_bytes, 512_000_000);
        assert_eq!(want.to_string(), "$0.166/h, 4 cores, 16 GiB");
    }

    #[test]
    fn a_wrong_price_names_the_part() {
        let why = |text: &str| text.parse::<Price>().unwrap_err().to_string();
        assert!(why("0/h,4cpu,16GiB").contains("'0/h' must be above zero"));
        assert!(why("0.166/h,-4cpu,16GiB").contains("'-4cpu' must be above zero"));
        assert!(why("0.166/h,4cpu,0GiB").contains("'0GiB' must be above zero"));
        assert!(why("0.166/h,fourcpu,16GiB").contains("'fourcpu' does not start"));
        assert!(why("0.166/h,4cpu,16G").contains("'16G' is not an hourly price"));
        assert!(why("0.166/h,4cpu").contains("no memory"));
        assert!(why("0.166/h,4cpu,8cpu,16GiB").contains("cores twice"));
        assert!(why("").contains("like 0.166/h,4cpu,16GiB"));
    }

    #[test]
    fn a_cpu_bound_model_by_hand() {
        // 1.08 of 4 cores = 0.27 instances; 210 MiB of 16 GiB = 0.0128 (smaller). Dollars per
        // million: 0.27 × 0.166 = 0.04482 an hour, ÷ 18,000,000 requests an hour = 2.49e-9 $
        // a request, 0.00249 $ a million; 1 ÷ 2.49e-9 = 401.6 M requests a dollar.
        let m = model(&price("0.166/h,4cpu,16GiB"), 1.08, 210 * MIB, 5000.0).unwrap();
        assert!(m.modeled);
        assert_eq!(m.bound_by, "cpu");
        assert!((m.instances - 0.27).abs() < 1e-12);
        assert!((m.usd_per_million_requests - 0.00249).abs() < 1e-12);
        assert!((m.requests_per_usd - 401_606_425.7).abs() < 1.0);
        assert_eq!(
            m.describe(),
            "modeled, not measured: 0.00249 $ per million requests (402 M requests per $) = \
             0.27 instances (bound by CPU: 1.08 of 4 cores; peak RSS 210 MiB of 16 GiB) × \
             $0.166/h ÷ 5,000 req/s"
        );
    }

    #[test]
    fn a_memory_bound_model_by_hand() {
        // 0.5 of 2 cores = 0.25; 1.5 GiB of 1 GiB = 1.5 instances (not rounded up). Dollars
        // per million: 1.5 × 0.1 = 0.15 an hour ÷ 3,600,000 requests = 0.0417 $ a million,
        // 24 M requests a dollar.
        let m = model(&price("0.1/h,2cpu,1GiB"), 0.5, 3 * GIB / 2, 1000.0).unwrap();
        assert_eq!(m.bound_by, "memory");
        assert!((m.instances - 1.5).abs() < 1e-12);
        assert!((m.usd_per_million_requests - 0.15 / 3.6).abs() < 1e-12);
        assert!((m.requests_per_usd - 24e6).abs() < 1e-3);
        let line = m.describe();
        assert!(
            line.contains("0.0417 $ per million requests (24 M requests per $)"),
            "{line}"
        );
        assert!(line.contains("bound by memory: 0.5 of 2 cores; peak RSS 1.5 GiB of 1 GiB"));
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<CostModel>(&json).unwrap(), m);
    }

    #[test]
    fn no_model_without_throughput_or_use() {
        let p = price("0.166/h,4cpu,16GiB");
        assert_eq!(model(&p, 1.0, GIB, 0.0), None);
        assert_eq!(model(&p, 1.0, GIB, f64::NAN), None);
        assert_eq!(model(&p, 0.0, 0, 100.0), None);
    }

    #[test]
    fn numbers_are_said_to_three_figures() {
        let said: Vec<String> = [0.0024900, 1.08, 4.0, 401.6, 5000.0, 1234567.0, 0.27]
            .iter()
            .map(|&x| significant(x))
            .collect();
        assert_eq!(
            said,
            ["0.00249", "1.08", "4", "402", "5,000", "1,234,567", "0.27"]
        );
        assert_eq!(bytes_text(512.0), "512 bytes");
    }
}
