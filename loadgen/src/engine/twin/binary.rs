//! Which `mock-upstream` binary loadgen starts as its own twin: the one `GATEBENCH_MOCK_BIN`
//! names, else the one beside loadgen's own executable, else the first on `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable that names the binary outright (for tests and unusual installs).
pub const MOCK_BIN_VAR: &str = "GATEBENCH_MOCK_BIN";

/// The binary's file name.
const MOCK_BIN: &str = "mock-upstream";

/// The binary to start, from this process's environment and executable.
pub fn find() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().ok();
    find_in(
        std::env::var_os(MOCK_BIN_VAR),
        exe.as_deref(),
        std::env::var_os("PATH"),
    )
}

/// The binary `named` (the variable's value) gives, else the one in `exe`'s folder, else the
/// first in `path`'s folders; why none, otherwise.
pub fn find_in(
    named: Option<OsString>,
    exe: Option<&Path>,
    path: Option<OsString>,
) -> Result<PathBuf, String> {
    if let Some(named) = named.filter(|n| !n.is_empty()) {
        let named = PathBuf::from(named);
        return if named.is_file() {
            Ok(named)
        } else {
            Err(format!(
                "{MOCK_BIN_VAR} names {}, which is not a file",
                named.display()
            ))
        };
    }
    let beside = exe.and_then(Path::parent).map(|dir| dir.join(MOCK_BIN));
    let on_path = path
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(MOCK_BIN));
    beside
        .into_iter()
        .chain(on_path)
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("no {MOCK_BIN} beside loadgen or on PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder holding an empty file named `mock-upstream`.
    fn folder_with_mock(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gatebench-bin-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(MOCK_BIN), b"").unwrap();
        dir
    }

    #[test]
    fn the_variable_wins_and_a_wrong_one_says_so() {
        let dir = folder_with_mock("var");
        let named = dir.join(MOCK_BIN);
        let found = find_in(Some(named.clone().into()), None, None).unwrap();
        assert_eq!(found, named);
        let err = find_in(Some("/nowhere/mock".into()), Some(&named), None).unwrap_err();
        assert!(
            err.contains("GATEBENCH_MOCK_BIN names /nowhere/mock"),
            "{err}"
        );
    }

    #[test]
    fn beside_loadgen_comes_before_path() {
        let beside = folder_with_mock("beside");
        let on_path = folder_with_mock("path");
        let exe = beside.join("loadgen");
        let path = std::env::join_paths([&on_path]).unwrap();
        let found = find_in(None, Some(&exe), Some(path.clone())).unwrap();
        assert_eq!(found, beside.join(MOCK_BIN));
        let elsewhere = std::env::temp_dir().join("gatebench-no-such-folder/loadgen");
        let found = find_in(None, Some(&elsewhere), Some(path)).unwrap();
        assert_eq!(found, on_path.join(MOCK_BIN));
        let err = find_in(None, Some(&elsewhere), None).unwrap_err();
        assert!(
            err.contains("no mock-upstream beside loadgen or on PATH"),
            "{err}"
        );
    }
}
