//! The memory profile's stacks written beside the result: `X.allocated.folded` and
//! `X.live.folded`, and their flame graphs (`.svg`), weighted by bytes.

use std::path::Path;

use crate::results::memory::MemoryProfile;

use super::super::beside;

/// Writes every kind of stack the profile has beside `out`; returns the paths written.
pub fn write_beside(memory: &MemoryProfile, out: &Path) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    for (name, folded) in [("allocated", &memory.allocated), ("live", &memory.live)] {
        let Some(folded) = folded.as_ref().filter(|f| !f.is_empty()) else {
            continue;
        };
        let path = beside(out, &format!(".{name}.folded"));
        crate::report::output::write_atomically(&path, folded.to_text().as_bytes())?;
        written.push(path.display().to_string());
        if let Some(svg) = crate::report::memory::flame_of(memory, name) {
            let path = beside(out, &format!(".{name}.svg"));
            crate::report::output::write_atomically(&path, svg.as_bytes())?;
            written.push(path.display().to_string());
        }
    }
    Ok(written)
}
