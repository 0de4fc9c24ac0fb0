//! `loadgen profile --diff BEFORE.folded AFTER.folded`: a differential flame graph of two
//! profiles (before and after a change to the gateway), the functions whose share moved most,
//! and, where the profiles' results lie beside their folded files, the two runs' latency side
//! by side.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::report::flame::Kind;
use crate::report::profile_diff::Side;
use crate::results::profile::Folded;

/// The page (or, for a `.svg` path, the SVG alone) of the difference between the folded files
/// `before` and `after`, and a summary for the terminal.
pub fn render(before: &Path, after: &Path, svg_only: bool) -> anyhow::Result<(String, String)> {
    let (b, a) = (read(before)?, read(after)?);
    crate::report::profile_diff::render(&b, &a, kind_of(after), svg_only)
}

/// One side read: its folded stacks, and the result beside them when there is one.
fn read(path: &Path) -> anyhow::Result<Side> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let folded = Folded::parse(&text)
        .map_err(|e| anyhow::anyhow!("{} is not folded stacks: {e}", path.display()))?;
    let result = result_beside(path).and_then(|json| crate::report::profile::read(&json).ok());
    Ok(Side {
        path: path.to_path_buf(),
        folded,
        result,
    })
}

/// The result a `.on-cpu.folded` or `.off-cpu.folded` file was written beside.
fn result_beside(folded: &Path) -> Option<PathBuf> {
    let name = folded.to_str()?;
    let stem = name
        .strip_suffix(".on-cpu.folded")
        .or_else(|| name.strip_suffix(".off-cpu.folded"))
        .or_else(|| name.strip_suffix(".allocated.folded"))
        .or_else(|| name.strip_suffix(".live.folded"))?;
    let json = PathBuf::from(format!("{stem}.json"));
    json.exists().then_some(json)
}

/// On-CPU or off-CPU, by the file's name (on-CPU when it does not say).
fn kind_of(path: &Path) -> Kind {
    match path.to_str() {
        Some(name) if name.ends_with(".off-cpu.folded") => Kind::OffCpu,
        Some(name) if name.ends_with(".allocated.folded") || name.ends_with(".live.folded") => {
            Kind::Bytes
        }
        _ => Kind::OnCpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_files_find_their_results_by_name() {
        assert_eq!(kind_of(Path::new("x/a.off-cpu.folded")), Kind::OffCpu);
        assert_eq!(kind_of(Path::new("x/a.folded")), Kind::OnCpu);
        assert_eq!(kind_of(Path::new("x/a.allocated.folded")), Kind::Bytes);
        assert_eq!(
            result_beside(Path::new("/nonexistent/a.on-cpu.folded")),
            None
        );
    }
}
