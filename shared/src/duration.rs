//! Durations as people write and read them: `250us`, `20ms`, `1.5s` in flags, presets and
//! config files, and `850 µs`, `1.25 ms` in reports. Both tools count in whole microseconds.

/// Parses `0`, `250us`, `20ms`, `1.5s` and the other forms `humantime` reads into microseconds.
pub fn parse_us(s: &str) -> Option<u64> {
    let s = s.trim();
    if s == "0" {
        return Some(0);
    }
    if let Some(secs) = s.strip_suffix('s').and_then(|v| v.parse::<f64>().ok()) {
        // humantime rejects fractions such as "1.5s"; accept them for seconds.
        return (secs.is_finite() && secs >= 0.0).then(|| (secs * 1e6).round() as u64);
    }
    let d = humantime::parse_duration(s).ok()?;
    u64::try_from(d.as_micros()).ok()
}

/// Formats microseconds in the unit a person would write (`0`, `250us`, `20ms`, `2s`): what
/// [`parse_us`] reads back.
pub fn format_us(us: u64) -> String {
    if us == 0 {
        "0".to_string()
    } else if us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us % 1_000 == 0 {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

/// Microseconds for people: `850 µs`, `1.25 ms`, `2.10 s`.
pub fn human_us(us: f64) -> String {
    let magnitude = us.abs();
    if !us.is_finite() {
        // A statistic of nothing (every call failed).
        "-".to_string()
    } else if magnitude < 1_000.0 {
        format!("{us:.0} µs")
    } else if magnitude < 1_000_000.0 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A resolution (a smallest difference told apart) for people: as [`human_us`], but under a
/// microsecond with the digits that keep it from reading as zero: `0.3 µs`, `0.04 µs`.
pub fn human_resolution_us(us: f64) -> String {
    let magnitude = us.abs();
    if us.is_finite() && magnitude > 0.0 && magnitude < 0.1 {
        format!("{us:.2} µs")
    } else if us.is_finite() && magnitude > 0.0 && magnitude < 0.95 {
        format!("{us:.1} µs")
    } else {
        human_us(us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolution_under_a_microsecond_keeps_its_digits() {
        assert_eq!(human_resolution_us(0.3), "0.3 µs");
        assert_eq!(human_resolution_us(0.04), "0.04 µs");
        assert_eq!(human_resolution_us(0.96), "1 µs");
        assert_eq!(human_resolution_us(12.4), "12 µs");
        assert_eq!(human_resolution_us(1500.0), "1.50 ms");
        assert_eq!(human_resolution_us(0.0), "0 µs");
    }

    #[test]
    fn every_form_reads_and_formats_back() {
        assert_eq!(parse_us("0"), Some(0));
        assert_eq!(parse_us(" 250us "), Some(250));
        assert_eq!(parse_us("20ms"), Some(20_000));
        assert_eq!(parse_us("1.5s"), Some(1_500_000));
        assert_eq!(parse_us("1m"), Some(60_000_000));
        assert_eq!(parse_us("fast"), None);
        assert_eq!(parse_us("-1s"), None);
        for us in [0, 250, 20_000, 2_000_000, 1_500] {
            assert_eq!(parse_us(&format_us(us)), Some(us));
        }
        assert_eq!(format_us(1_500), "1500us");
    }

    #[test]
    fn people_read_the_unit_that_fits() {
        assert_eq!(human_us(850.0), "850 µs");
        assert_eq!(human_us(1_250.0), "1.25 ms");
        assert_eq!(human_us(2_100_000.0), "2.10 s");
        assert_eq!(human_us(f64::NAN), "-");
    }
}
