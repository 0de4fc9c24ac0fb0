//! bpftrace's maps as it prints them when it ends, read back: the calls by entry point, the bytes,
//! the bytes by stack, and the allocations still live with where they were made.
//!
//! An entry is `@name: value`, `@name[key]: value`, or one whose key or value holds a stack
//! (`@stacks[comm, ⏎ ⇥frame ⏎ … ]: value`, `@where[ptr]: (comm, ⏎ ⇥frame ⏎ … )`), frames leaf
//! first as `ADDRESS SYMBOL+OFFSET (OBJECT)`.

use std::collections::BTreeMap;

use crate::results::profile::Folded;

/// The maps of one window.
#[derive(Debug, Default, PartialEq)]
pub struct Maps {
    pub calls: BTreeMap<String, u64>,
    pub bytes: u64,
    /// Bytes allocated, by stack root first (the thread's name at the root).
    pub stacks: Folded,
    /// Allocations still live at the end: bytes by stack, and their total.
    pub live: Folded,
    pub live_bytes: u64,
    /// loadgen's own allocations in the window.
    pub own: u64,
}

/// Reads what bpftrace printed.
pub fn parse(text: &str) -> Maps {
    let mut maps = Maps::default();
    let mut sizes: BTreeMap<String, u64> = BTreeMap::new();
    let mut wheres: BTreeMap<String, String> = BTreeMap::new();
    for entry in entries(text) {
        let Some((name, key, value)) = split(&entry) else {
            continue;
        };
        let number = || value.trim().parse::<u64>().ok();
        match (name, key) {
            ("@bytes", None) => maps.bytes = number().unwrap_or(0),
            ("@own", None) => maps.own = number().unwrap_or(0),
            ("@calls", Some(k)) => {
                maps.calls
                    .insert(k.trim().to_string(), number().unwrap_or(0));
            }
            ("@stacks", Some(k)) => {
                if let Some(n) = number() {
                    maps.stacks.add(&fold(k), n);
                }
            }
            ("@live", Some(k)) => {
                sizes.insert(k.trim().to_string(), number().unwrap_or(0));
            }
            ("@where", Some(k)) => {
                let v = value.trim().trim_start_matches('(').trim_end_matches(')');
                wheres.insert(k.trim().to_string(), fold(v));
            }
            _ => {}
        }
    }
    for (ptr, size) in sizes {
        maps.live_bytes += size;
        let stack = wheres.remove(&ptr).unwrap_or_else(|| "[unknown]".into());
        maps.live.add(&stack, size);
    }
    maps
}

/// The printed text cut into entries, each starting at a line that starts with `@`.
fn entries(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('@') {
            out.push(line.to_string());
        } else if let Some(last) = out.last_mut() {
            if !line.trim().is_empty() {
                last.push('\n');
                last.push_str(line);
            }
        }
    }
    out
}

/// An entry's map name, key (if any) and value.
fn split(entry: &str) -> Option<(&str, Option<&str>, &str)> {
    let name_end = entry.find(['[', ':'])?;
    let name = &entry[..name_end];
    if entry[name_end..].starts_with('[') {
        let close = entry.find("]: ")?;
        Some((name, Some(&entry[name_end + 1..close]), &entry[close + 3..]))
    } else {
        Some((name, None, entry[name_end + 1..].trim()))
    }
}

/// `comm, ⏎ frames leaf first` as one folded stack, root first.
fn fold(key: &str) -> String {
    let (comm, frames) = key.split_once(',').unwrap_or(("", key));
    let mut names: Vec<String> = frames
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(frame_name)
        .collect();
    names.reverse();
    let comm = comm.trim();
    let mut stack = if comm.is_empty() {
        String::from("[unknown]")
    } else {
        comm.replace(';', ":")
    };
    for n in names {
        stack.push(';');
        stack.push_str(&n);
    }
    stack
}

/// `ADDRESS SYMBOL+OFFSET (OBJECT)` as the function's readable name.
fn frame_name(line: &str) -> String {
    let text = line.split_once(' ').map_or(line, |(_, rest)| rest);
    let text = match text.rfind(" (") {
        Some(i) if text.ends_with(')') => &text[..i],
        _ => text,
    };
    let symbol = match text.rfind('+') {
        Some(i) if text[i + 1..].chars().all(|c| c.is_ascii_digit()) => &text[..i],
        _ => text,
    };
    readable(symbol).replace(';', ":")
}

/// A Rust symbol demangled (v0, or legacy with its hash dropped); others as they are.
fn readable(symbol: &str) -> String {
    if symbol.starts_with("_R") || symbol.starts_with("_ZN") {
        if let Ok(d) = rustc_demangle::try_demangle(symbol) {
            return format!("{d:#}");
        }
    }
    // Legacy Rust names bpftrace demangled itself keep their hash (`::h0123456789abcdef`).
    match symbol.rfind("::h") {
        Some(i)
            if symbol.len() == i + 19 && symbol[i + 3..].chars().all(|c| c.is_ascii_hexdigit()) =>
        {
            symbol[..i].to_string()
        }
        _ => symbol.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRINTED: &str = "Attaching 7 probes...\n\n\n@bytes: 51618\n\
@calls[malloc]: 22\n@calls[free]: 32\n\
@live[139829908289232]: 29\n@live[139829773932992]: 40\n@on: 0\n@own: 12\n\n\
@stacks[mock-worker-0, \n\
\t7f2cb7fe8930 __GI___libc_malloc+0 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
\t562a3c418088 _$LT$httpdate..date..HttpDate$u20$as$u20$core..fmt..Display$GT$::fmt::h6b3010480413560b+424 (/m)\n\
\t562a3c4974b0 mock_upstream::connection::serve::he361c1e8500a0819+14384 (/m)\n\
]: 29\n\
@stacks[mock-worker-1, \n\
\t7f2cb7fe8930 __GI___libc_malloc+0 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
]: 30936\n\
@where[139829773932992]: (mock-worker-1, \n\
\t7f2cb7fe8930 __GI___libc_malloc+0 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
\t562a3c36df1b _RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner11finish_growB7_+75 (/m)\n\
)\n";

    #[test]
    fn the_printed_maps_read_back() {
        let m = parse(PRINTED);
        assert_eq!(m.bytes, 51618);
        assert_eq!(m.calls["malloc"], 22);
        assert_eq!(m.calls["free"], 32);
        assert_eq!(m.own, 12);
        assert_eq!(m.stacks.total(), 29 + 30936);
        assert_eq!(
            m.stacks.0.get("mock-worker-0;mock_upstream::connection::serve;_$LT$httpdate..date..HttpDate$u20$as$u20$core..fmt..Display$GT$::fmt;__GI___libc_malloc"),
            Some(&29),
            "{:?}",
            m.stacks
        );
        assert_eq!(m.live_bytes, 69);
        assert_eq!(
            m.live
                .0
                .get("mock-worker-1;<alloc::raw_vec::RawVecInner>::finish_grow;__GI___libc_malloc"),
            Some(&40),
            "{:?}",
            m.live
        );
        assert_eq!(
            m.live.0.get("[unknown]"),
            Some(&29),
            "a live one without its stack"
        );
    }

    #[test]
    fn nothing_printed_is_nothing_counted() {
        assert_eq!(parse("Attaching 7 probes...\n"), Maps::default());
    }
}
