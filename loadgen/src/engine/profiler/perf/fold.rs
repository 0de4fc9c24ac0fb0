//! Folded stacks (`root;caller;…;leaf COUNT`, the format flame graphs are drawn from): on-CPU
//! samples folded by inferno's perf collapser, off-CPU time folded here from the scheduler's
//! switches, and what a reader asks of either: the total, the share of one function, the
//! functions that hold the most.

use std::collections::HashMap;

use crate::results::profile::Folded;
use inferno::collapse::Collapse as _;

impl Folded {
    /// Parses folded text: one `stack count` per line (blank lines skipped).
    pub fn parse(text: &str) -> Result<Folded, String> {
        let mut folded = Folded::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let parsed = line
                .rsplit_once(' ')
                .and_then(|(stack, count)| Some((stack, count.parse::<u64>().ok()?)));
            match parsed {
                Some((stack, count)) if !stack.is_empty() => folded.add(stack, count),
                _ => return Err(format!("line {}: expected `frame;frame;… COUNT`", n + 1)),
            }
        }
        Ok(folded)
    }

    pub fn add(&mut self, stack: &str, count: u64) {
        *self.0.entry(stack.to_string()).or_default() += count;
    }

    pub fn merge(&mut self, other: &Folded) {
        for (stack, count) in &other.0 {
            self.add(stack, *count);
        }
    }

    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text of a `.folded` file.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (stack, count) in &self.0 {
            out.push_str(stack);
            out.push(' ');
            out.push_str(&count.to_string());
            out.push('\n');
        }
        out
    }

    /// The share of the weight in stacks with a frame containing `name`.
    pub fn share_containing(&self, name: &str) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let hit: u64 = self
            .0
            .iter()
            .filter(|(stack, _)| stack.split(';').any(|f| f.contains(name)))
            .map(|(_, c)| c)
            .sum();
        hit as f64 / total as f64
    }

    /// The `n` functions with the most weight, as (function, self, total): self is the weight
    /// of stacks where it is the leaf (running itself), total of stacks where it is anywhere
    /// (counted once per stack, however deep it recurses).
    pub fn top(&self, n: usize) -> Vec<(String, u64, u64)> {
        self.top_above(n, |_| false)
    }

    /// [`Folded::top`], with the frames `passed_over` taken off the top of every stack first:
    /// off-CPU, the reason and the scheduler's own frames, so that "self" is where each thread
    /// asked to wait.
    pub fn top_above(&self, n: usize, passed_over: fn(&str) -> bool) -> Vec<(String, u64, u64)> {
        let mut own: HashMap<&str, u64> = HashMap::new();
        let mut all: HashMap<&str, u64> = HashMap::new();
        for (stack, count) in &self.0 {
            let frames: Vec<&str> = stack.split(';').collect();
            // The root is the process or thread name, not a function.
            let mut functions = &frames[1.min(frames.len())..];
            while let Some((last, rest)) = functions.split_last() {
                if !passed_over(last) {
                    break;
                }
                functions = rest;
            }
            if let Some(leaf) = functions.last() {
                *own.entry(leaf).or_default() += count;
            }
            let mut seen: Vec<&str> = Vec::with_capacity(functions.len());
            for f in functions {
                if !seen.contains(f) {
                    seen.push(f);
                    *all.entry(f).or_default() += count;
                }
            }
        }
        let mut rows: Vec<(String, u64, u64)> = all
            .into_iter()
            .map(|(f, total)| (f.to_string(), own.get(f).copied().unwrap_or(0), total))
            .collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        rows.truncate(n);
        rows
    }
}

/// Folds the output of `perf script` (its default fields) of on-CPU samples: one count per
/// sample, the thread's name at the root, kernel functions marked `_[k]`, JIT code `_[j]`.
pub fn on_cpu(script: &[u8]) -> Result<Folded, String> {
    let mut options = inferno::collapse::perf::Options::default();
    options.annotate_kernel = true;
    options.annotate_jit = true;
    options.nthreads = 1;
    let mut out = Vec::new();
    inferno::collapse::perf::Folder::from(options)
        .collapse(script, &mut out)
        .map_err(|e| format!("cannot fold perf's samples: {e}"))?;
    Folded::parse(&String::from_utf8_lossy(&out))
}

/// The fields on-CPU folding reads (`perf script -F`): perf's default but the period, so each
/// sample counts one.
pub const ON_CPU_FIELDS: &str = "comm,tid,time,event,ip,sym,dso";

/// The fields off-CPU folding reads (`perf script -F`, with `--show-switch-events`).
pub const OFF_CPU_FIELDS: &str = "tid,time,trace,ip,sym,dso";

/// Folds the gateway's switches off a CPU (`sched:sched_switch` samples with their stacks)
/// and back onto one (`PERF_RECORD_SWITCH IN`), from `perf script -F` [`OFF_CPU_FIELDS`]
/// `--show-switch-events`, into off-CPU time: from each switch off to the same thread's next
/// switch on, in µs, under the thread's name and the stack it left from, with the reason as the
/// leaf frame (sleeping, uninterruptible, or runnable and waiting for a CPU). A thread still
/// off a CPU when the recording ends is counted to the recording's last event.
pub fn off_cpu(script: &[u8]) -> Folded {
    let text = String::from_utf8_lossy(script);
    let mut folded = Folded::default();
    // tid → (left at, stack key)
    let mut away: HashMap<u32, (f64, String)> = HashMap::new();
    let mut last_s = 0.0f64;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with('\t') || line.trim().is_empty() {
            continue;
        }
        let mut stack = Vec::new();
        while let Some(frame) = lines.peek().filter(|l| l.starts_with('\t')) {
            stack.push(frame_name(frame));
            lines.next();
        }
        if let Some((tid, time_s)) = switched_in(line) {
            last_s = last_s.max(time_s);
            if let Some((left, key)) = away.remove(&tid) {
                folded.add(&key, micros(time_s - left));
            }
            continue;
        }
        let Some(switch) = Switch::parse(line) else {
            continue;
        };
        last_s = last_s.max(switch.time_s);
        let mut frames = vec![switch.comm.replace(';', ":")];
        frames.extend(stack.into_iter().rev());
        frames.push(reason(switch.state).into());
        away.insert(switch.prev, (switch.time_s, frames.join(";")));
    }
    for (left, key) in away.into_values() {
        folded.add(&key, micros(last_s - left));
    }
    folded.0.retain(|_, us| *us > 0);
    folded
}

fn micros(seconds: f64) -> u64 {
    (seconds.max(0.0) * 1e6).round() as u64
}

fn reason(state: &str) -> &'static str {
    match state.chars().next() {
        Some('R') => "[off-cpu: runnable, waiting for a CPU]",
        Some('D') => "[off-cpu: uninterruptible]",
        _ => "[off-cpu: sleeping]",
    }
}

/// `TID TIME: PERF_RECORD_SWITCH IN`: the thread and the instant it came back onto a CPU.
fn switched_in(line: &str) -> Option<(u32, f64)> {
    if !line.trim_end().ends_with("PERF_RECORD_SWITCH IN") {
        return None;
    }
    let mut words = line.split_whitespace();
    let tid = words.next()?.parse().ok()?;
    let time_s = words.next()?.strip_suffix(':')?.parse().ok()?;
    Some((tid, time_s))
}

/// One `sched:sched_switch` line: `TID TIME: prev_comm=NAME prev_pid=N … prev_state=S ==>
/// next_comm=… next_pid=M …` (a name may hold spaces).
#[derive(Debug, PartialEq)]
struct Switch<'a> {
    time_s: f64,
    comm: &'a str,
    prev: u32,
    state: &'a str,
}

impl<'a> Switch<'a> {
    fn parse(line: &'a str) -> Option<Switch<'a>> {
        let time_s = line
            .split_whitespace()
            .find_map(|t| t.strip_suffix(':')?.parse::<f64>().ok())?;
        let field = |key: &str| -> Option<&'a str> {
            let at = line.find(key)? + key.len();
            line[at..].split_whitespace().next()
        };
        let comm_at = line.find("prev_comm=")? + "prev_comm=".len();
        let comm_end = line.find(" prev_pid=")?;
        Some(Switch {
            time_s,
            comm: line.get(comm_at..comm_end)?,
            prev: field(" prev_pid=")?.parse().ok()?,
            state: field(" prev_state=")?,
        })
    }
}

/// A stack line of `perf script`: `ADDRESS SYMBOL (DSO)`; an unknown symbol is named by its
/// file, like inferno does; kernel functions are marked `_[k]`, as on-CPU.
fn frame_name(line: &str) -> String {
    let rest = line.trim().split_once(' ').map_or("", |(_, r)| r);
    let (symbol, dso) = match rest.rsplit_once(" (") {
        Some((s, d)) => (s.trim(), d.trim_end_matches(')')),
        None => (rest.trim(), ""),
    };
    let symbol = symbol.replace(';', ":");
    if dso == "[kernel.kallsyms]" {
        format!("{symbol}_[k]")
    } else if symbol.is_empty() || symbol == "[unknown]" {
        match dso.rsplit('/').next().unwrap_or(dso) {
            "" | "[unknown]" => "[unknown]".to_string(),
            file => format!("[{file}]"),
        }
    } else {
        symbol
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_text_round_trips_and_bad_lines_are_named() {
        let folded = Folded::parse("a;b;c 3\na;b 2\n\na;b;c 1\n").unwrap();
        assert_eq!(folded.total(), 6);
        assert_eq!(folded.0["a;b;c"], 4);
        assert_eq!(Folded::parse(&folded.to_text()).unwrap(), folded);
        assert!(Folded::parse("a;b x\n").unwrap_err().contains("line 1"));
        assert!((folded.share_containing("c") - 4.0 / 6.0).abs() < 1e-9);
        let top = folded.top(5);
        assert_eq!(top[0], ("c".into(), 4, 4));
        assert_eq!(top[1], ("b".into(), 2, 6));
    }

    #[test]
    fn switches_fold_into_time_off_cpu_under_the_stack_left_from() {
        let script = "\
 7 100.000000: prev_comm=gw worker prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
\tffffffff1 __schedule ([kernel.kallsyms])
\t  4a2b epoll_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t  1234 main (/usr/sbin/gw)

 7 100.000250: PERF_RECORD_SWITCH IN
 7 100.001000: prev_comm=gw worker prev_pid=7 prev_prio=120 prev_state=R+ ==> next_comm=mock next_pid=9 next_prio=120
\t  99 [unknown] (/usr/sbin/gw)

 7 100.001000: PERF_RECORD_SWITCH OUT
 7 100.001100: PERF_RECORD_SWITCH IN
 7 100.002000: prev_comm=gw worker prev_pid=7 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120
\t  6 read (/usr/lib/x86_64-linux-gnu/libc.so.6)

 8 100.002500: PERF_RECORD_SWITCH IN
";
        let folded = off_cpu(script.as_bytes());
        assert_eq!(
            folded.0["gw worker;main;epoll_wait;__schedule_[k];[off-cpu: sleeping]"],
            250
        );
        assert_eq!(
            folded.0["gw worker;[gw];[off-cpu: runnable, waiting for a CPU]"],
            100
        );
        // Still away at the end: counted to the last event.
        assert_eq!(folded.0["gw worker;read;[off-cpu: uninterruptible]"], 500);
        assert_eq!(folded.0.len(), 3);
    }
}
