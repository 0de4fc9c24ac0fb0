//! Recorded traces (`--trace FILE`): one request per row with its arrival instant, prompt
//! tokens and output tokens, replayed open-loop at the recorded instants (`--speedup` divides
//! them). CSV with a header row, or JSON lines. The columns of the public Azure LLM inference
//! traces (`TIMESTAMP,ContextTokens,GeneratedTokens`, timestamps like
//! `2023-11-16 18:15:46.6805900`) are read as they are.

use std::path::Path;

use serde_json::Value;

use crate::generator::plan_error::PlanError;

/// One recorded request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// Arrival, ns after the trace's first.
    pub at_ns: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Most rows a trace may hold (each becomes a pre-encoded request).
const MAX_ROWS: usize = 5_000_000;

const TIME_NAMES: [&str; 4] = ["timestamp", "time", "arrival_time", "ts"];
const INPUT_NAMES: [&str; 5] = [
    "contexttokens",
    "input_tokens",
    "prompt_tokens",
    "input",
    "context_tokens",
];
const OUTPUT_NAMES: [&str; 6] = [
    "generatedtokens",
    "output_tokens",
    "completion_tokens",
    "output",
    "generated_tokens",
    "max_tokens",
];

/// Reads a trace, sorted by arrival, its instants divided by `speedup` and made relative to
/// the first row.
pub fn read(path: &Path, speedup: f64) -> Result<Vec<Row>, PlanError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| PlanError::File("--trace", name.clone(), e.to_string()))?;
    let bad = |line: usize, why: String| {
        PlanError::File("--trace", name.clone(), format!("line {line}: {why}"))
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((_, first)) = lines.next() else {
        return Err(bad(1, "no rows".into()));
    };
    // Nanoseconds (from any origin) and tokens per row, in file order.
    let mut raw: Vec<(i128, u64, u64)> = Vec::new();
    if first.starts_with('{') {
        for (line, text) in std::iter::once((1, first)).chain(lines) {
            raw.push(json_row(text).map_err(|why| bad(line, why))?);
            if raw.len() > MAX_ROWS {
                return Err(bad(line, format!("more than {MAX_ROWS} rows")));
            }
        }
    } else {
        let columns = Columns::of(first).map_err(|why| bad(1, why))?;
        for (line, text) in lines {
            raw.push(columns.row(text).map_err(|why| bad(line, why))?);
            if raw.len() > MAX_ROWS {
                return Err(bad(line, format!("more than {MAX_ROWS} rows")));
            }
        }
    }
    if raw.is_empty() {
        return Err(bad(1, "no rows".into()));
    }
    raw.sort_by_key(|r| r.0);
    let origin = raw[0].0;
    Ok(raw
        .into_iter()
        .map(|(ns, input_tokens, output_tokens)| Row {
            at_ns: ((ns - origin) as f64 / speedup).round() as u64,
            input_tokens,
            output_tokens,
        })
        .collect())
}

/// Which CSV column holds what.
struct Columns {
    time: usize,
    input: usize,
    output: usize,
}

impl Columns {
    fn of(header: &str) -> Result<Columns, String> {
        let names: Vec<String> = header
            .split(',')
            .map(|c| c.trim().trim_matches('"').to_ascii_lowercase())
            .collect();
        let find = |wanted: &[&str], what: &str| {
            names
                .iter()
                .position(|n| wanted.contains(&n.as_str()))
                .ok_or_else(|| {
                    format!(
                        "the header row names no {what} column (one of {})",
                        wanted.join(", ")
                    )
                })
        };
        Ok(Columns {
            time: find(&TIME_NAMES, "timestamp")?,
            input: find(&INPUT_NAMES, "input tokens")?,
            output: find(&OUTPUT_NAMES, "output tokens")?,
        })
    }

    fn row(&self, text: &str) -> Result<(i128, u64, u64), String> {
        let cells: Vec<&str> = text
            .split(',')
            .map(|c| c.trim().trim_matches('"'))
            .collect();
        let cell = |i: usize| cells.get(i).copied().ok_or("too few columns".to_string());
        Ok((
            instant_ns(cell(self.time)?)?,
            tokens(cell(self.input)?)?,
            tokens(cell(self.output)?)?,
        ))
    }
}

fn json_row(text: &str) -> Result<(i128, u64, u64), String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let object = value.as_object().ok_or("not a JSON object")?;
    let get = |names: &[&str]| {
        object
            .iter()
            .find(|(k, _)| names.contains(&k.to_ascii_lowercase().as_str()))
            .map(|(_, v)| v)
    };
    let time = match get(&TIME_NAMES) {
        Some(Value::Number(n)) => instant_ns(&n.to_string())?,
        Some(Value::String(s)) => instant_ns(s)?,
        _ => return Err(format!("no timestamp (one of {})", TIME_NAMES.join(", "))),
    };
    let count = |names: &[&str], what: &str| match get(names) {
        Some(Value::Number(n)) => n.as_u64().ok_or(format!("bad {what}")),
        Some(Value::String(s)) => tokens(s),
        _ => Err(format!("no {what} (one of {})", names.join(", "))),
    };
    Ok((
        time,
        count(&INPUT_NAMES, "input tokens")?,
        count(&OUTPUT_NAMES, "output tokens")?,
    ))
}

fn tokens(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| format!("'{text}' is not a token count"))
}

/// Nanoseconds from a number of seconds (from any origin) or from a date and time
/// (`2023-11-16 18:15:46.6805900`, `T` and a `Z` allowed; read as UTC), kept whole so a
/// date's fraction of a second is not lost to rounding.
fn instant_ns(text: &str) -> Result<i128, String> {
    let bad =
        || format!("'{text}' is neither seconds nor a date and time like 2023-11-16 18:15:46.68");
    if let Ok(s) = text.parse::<f64>() {
        return s
            .is_finite()
            .then(|| (s * 1e9).round() as i128)
            .ok_or_else(bad);
    }
    let text = text.trim_end_matches('Z').trim_end_matches("+00:00");
    let (date, time) = text.split_once([' ', 'T']).ok_or_else(bad)?;
    let number = |t: &str| t.parse::<i64>().map_err(|_| bad());
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    let ([y, m, day], [h, min, sec]) = (d.as_slice(), t.as_slice()) else {
        return Err(bad());
    };
    let (y, m, day, h, min) = (
        number(y)?,
        number(m)?,
        number(day)?,
        number(h)?,
        number(min)?,
    );
    let (whole, fraction) = sec.split_once('.').unwrap_or((sec, ""));
    let whole = number(whole)?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || h > 23 || min > 59 || whole > 60 {
        return Err(bad());
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // The fraction's first nine digits, as nanoseconds.
    let digits: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(9)
        .collect();
    let nanos = number(&digits)?;
    let seconds = days_from_civil(y, m, day) * 86_400 + h * 3_600 + min * 60 + whole;
    Ok(i128::from(seconds) * 1_000_000_000 + i128::from(nanos))
}

/// Days from 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file removed when dropped.
    struct Temp(std::path::PathBuf);

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn write(text: &str) -> Temp {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("gatebench-trace-{}-{n}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        Temp(path)
    }

    #[test]
    fn the_azure_trace_columns_are_read_as_they_are() {
        let file = write(
            "TIMESTAMP,ContextTokens,GeneratedTokens\n\
             2023-11-16 18:15:46.6805900,374,44\n\
             2023-11-16 18:15:50.9951690,396,109\n\
             2023-11-16 18:15:51.0,879,1\n",
        );
        let rows = read(&file.0, 1.0).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            Row {
                at_ns: 0,
                input_tokens: 374,
                output_tokens: 44
            }
        );
        assert_eq!(rows[1].at_ns, 4_314_579_000);
        assert_eq!(rows[2].at_ns, 4_319_410_000);
        // Twice as fast: half the gaps.
        assert_eq!(read(&file.0, 2.0).unwrap()[1].at_ns, 2_157_289_500);
    }

    #[test]
    fn json_lines_and_unsorted_rows_are_read_in_time_order() {
        let file = write(
            "{\"timestamp\": 2.5, \"input_tokens\": 10, \"output_tokens\": 3}\n\
             {\"timestamp\": 1.0, \"input_tokens\": 20, \"output_tokens\": 4}\n",
        );
        let rows = read(&file.0, 1.0).unwrap();
        assert_eq!(
            rows[0],
            Row {
                at_ns: 0,
                input_tokens: 20,
                output_tokens: 4
            }
        );
        assert_eq!(rows[1].at_ns, 1_500_000_000);
    }

    #[test]
    fn bad_rows_name_their_line() {
        for (text, says) in [
            ("time,a,b\n1,2,3\n", "no input tokens column"),
            (
                "timestamp,input_tokens,output_tokens\n1,2\n",
                "line 2: too few columns",
            ),
            (
                "timestamp,input_tokens,output_tokens\nsoon,2,3\n",
                "line 2: 'soon'",
            ),
            ("{\"timestamp\": 1}\n", "line 1: no input tokens"),
            ("", "no rows"),
        ] {
            let file = write(text);
            let err = read(&file.0, 1.0).unwrap_err().to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }

    #[test]
    fn dates_count_days_from_the_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(
            instant_ns("1970-01-02T00:00:01.5Z").unwrap(),
            86_401_500_000_000
        );
    }
}
