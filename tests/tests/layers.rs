//! The crates' shape, held: every module of loadgen imports only from its own layer or the layers
//! below it (the order is `LOADGEN_LAYERS`, as DESIGN.md draws it), every module of mock-upstream
//! only from its own family or those below it (`MOCK_LAYERS`), and no two modules of loadgen or
//! mock-upstream import each other, directly or round a circle.
//!
//! The source is read as text: every `crate::…` and `super::…` path outside comments counts as
//! an import of the module it names (a `use`, a path in an expression or a type alike). A module
//! is a file or a folder one step below its crate's root (loadgen: one step below its layer, such
//! as `generator::plan`); a file deeper in a folder speaks for the folder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// loadgen's layers, top to bottom. A module may import from its own layer and those after it.
/// The crate's root files (`lib.rs`, `main.rs`, `fuzzing.rs`) stand above them all.
///
/// The three data layers stand at the bottom: `results` (plain data written and read back as
/// itself) above `options`, so a result may name an option's kind but no option a result, and
/// `model` (targets, loads, shards: what every layer works with) under both.
const LOADGEN_LAYERS: &[&str] = &[
    "commands",
    "report",
    "engine",
    "generator",
    "wire",
    "results",
    "options",
    "model",
];

/// mock-upstream's families, top to bottom (the folders and root files `lib.rs` names). A module
/// may import from its own family and those after it; the crate's root files (`lib.rs`,
/// `main.rs`) stand above them all.
const MOCK_LAYERS: &[&str] = &[
    "cli",
    "serving",
    "api",
    "admission",
    "answer",
    "state",
    "ratelimit",
    "control",
    "catalog",
    "observability",
    "timing",
    "config",
];

/// mock-upstream's data layer: settings that import nothing else of the crate.
const MOCK_DATA: &str = "config";

/// Imports that still run from a lower layer up, as `file -> module`: each one is a debt, and
/// this list may only shrink. A new upward import fails the test, and so does an entry here
/// that no longer holds (take it off).
const LOADGEN_UPWARD: &[&str] = &[];

#[test]
fn loadgen_imports_only_from_its_own_layer_or_below() {
    let crate_dir = workspace().join("loadgen/src");
    let files = sources(&crate_dir);
    let mut upward = BTreeSet::new();
    for (file, module) in &files {
        let Some(from) = layer_of(module) else {
            continue;
        };
        for import in imports(file, module) {
            let Some(to) = layer_of(&import) else {
                continue;
            };
            if to < from {
                upward.insert(format!(
                    "{} -> {}",
                    relative(&crate_dir, file),
                    room(&import, 2)
                ));
            }
        }
    }
    let known: BTreeSet<String> = LOADGEN_UPWARD.iter().map(|s| s.to_string()).collect();
    let new: Vec<_> = upward.difference(&known).collect();
    let gone: Vec<_> = known.difference(&upward).collect();
    assert!(
        new.is_empty(),
        "imports from a lower layer up into a higher one (layers, top to bottom: {}):\n{}",
        LOADGEN_LAYERS.join(", "),
        lines(&new)
    );
    assert!(
        gone.is_empty(),
        "these upward imports are gone: take them off LOADGEN_UPWARD:\n{}",
        lines(&gone)
    );
}

/// loadgen's import circles that still stand, each as its modules in order; like
/// `LOADGEN_UPWARD`, this list may only shrink.
const LOADGEN_CIRCLES: &[&str] = &[];

#[test]
fn loadgen_has_no_import_circle_beyond_the_known() {
    let found: BTreeSet<String> = circles(&workspace().join("loadgen/src"), 2)
        .into_iter()
        .collect();
    let known: BTreeSet<String> = LOADGEN_CIRCLES.iter().map(|s| s.to_string()).collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "import circles in loadgen:\n{}",
        lines(&new)
    );
    assert!(
        gone.is_empty(),
        "these circles are gone: take them off LOADGEN_CIRCLES:\n{}",
        lines(&gone)
    );
}

#[test]
fn mock_upstream_imports_only_from_its_own_family_or_below() {
    let crate_dir = workspace().join("mock-upstream/src");
    let mut upward = BTreeSet::new();
    for (file, module) in sources(&crate_dir) {
        let Some(from) = position(MOCK_LAYERS, &module) else {
            continue;
        };
        for import in imports(&file, &module) {
            if position(MOCK_LAYERS, &import).is_some_and(|to| to < from) {
                upward.insert(format!(
                    "{} -> {}",
                    relative(&crate_dir, &file),
                    room(&import, 2)
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a lower family up into a higher one (families, top to bottom: {}):\n{}",
        MOCK_LAYERS.join(", "),
        lines(&upward.iter().collect::<Vec<_>>())
    );
}

#[test]
fn mock_upstream_has_no_import_circle_and_its_settings_import_nothing() {
    let crate_dir = workspace().join("mock-upstream/src");
    // Between families, and between the modules inside each family.
    for depth in [1, 2] {
        let circles = circles(&crate_dir, depth);
        assert!(
            circles.is_empty(),
            "import circles in mock-upstream:\n{}",
            lines(&circles)
        );
    }
    let mut leaks = Vec::new();
    for (file, module) in sources(&crate_dir) {
        if module.first().map(String::as_str) != Some(MOCK_DATA) {
            continue;
        }
        for import in imports(&file, &module) {
            if import.first().is_some_and(|m| m != MOCK_DATA) {
                leaks.push(format!(
                    "{} -> {}",
                    relative(&crate_dir, &file),
                    room(&import, 1)
                ));
            }
        }
    }
    leaks.dedup();
    assert!(
        leaks.is_empty(),
        "{MOCK_DATA}/ is plain settings, yet imports:\n{}",
        lines(&leaks)
    );
}

/// Prints loadgen's shape (`cargo test -p gatebench-tests --test layers -- --nocapture`): each
/// layer's files and lines, the imports from it into each layer, the imports running up, the
/// circles, the files over 600 lines, and each crate's functions over 60 lines outside tests.
/// It asserts nothing the tests above do not.
#[test]
fn the_shape_is_printed() {
    let crate_dir = workspace().join("loadgen/src");
    let files = sources(&crate_dir);
    let mut out = format!(
        "loadgen, top to bottom: {}\n{:<10} {:>5} {:>6}  imports (file -> module) into each layer\n",
        LOADGEN_LAYERS.join(", "),
        "layer",
        "files",
        "lines"
    );
    let mut upward = 0;
    for (rank, layer) in LOADGEN_LAYERS.iter().enumerate() {
        let mine: Vec<_> = files
            .iter()
            .filter(|(_, m)| layer_of(m) == Some(rank))
            .collect();
        let lines: usize = mine.iter().map(|(f, _)| line_count(f)).sum();
        let mut into: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for (file, module) in &mine {
            for import in imports(file, module) {
                if let Some(to) = layer_of(&import) {
                    into.entry(to).or_default().insert(format!(
                        "{} {}",
                        relative(&crate_dir, file),
                        room(&import, 2)
                    ));
                }
            }
        }
        let counts: Vec<String> = into
            .iter()
            .map(|(to, set)| format!("{} {}", LOADGEN_LAYERS[*to], set.len()))
            .collect();
        upward += into.range(..rank).map(|(_, set)| set.len()).sum::<usize>();
        out += &format!(
            "{layer:<10} {:>5} {lines:>6}  {}\n",
            mine.len(),
            counts.join(", ")
        );
    }
    let found = circles(&crate_dir, 2);
    out += &format!(
        "imports running up (file -> module): {upward}\ncircles: {}\n",
        found.len()
    );
    for circle in &found {
        out += &format!("  {circle}\n");
    }
    let long: Vec<String> = files
        .iter()
        .filter(|(f, _)| line_count(f) > 600)
        .map(|(f, _)| format!("{} {}", relative(&crate_dir, f), line_count(f)))
        .collect();
    out += &format!(
        "files over 600 lines: {}\n",
        if long.is_empty() {
            "none".to_string()
        } else {
            long.join(", ")
        }
    );
    let mock = circles(&workspace().join("mock-upstream/src"), 1);
    out += &format!(
        "mock-upstream circles between top-level modules: {}\n",
        mock.len()
    );
    for (name, dir) in [
        ("loadgen", "loadgen/src"),
        ("mock-upstream", "mock-upstream/src"),
    ] {
        let dir = workspace().join(dir);
        let mut long: Vec<(usize, String)> = sources(&dir)
            .iter()
            .flat_map(|(file, _)| {
                let at = relative(&dir, file);
                long_functions(file)
                    .into_iter()
                    .map(move |(n, f)| (n, format!("{at}:{f} {n}")))
            })
            .collect();
        long.sort_by_key(|x| std::cmp::Reverse(x.0));
        let names: Vec<String> = long.into_iter().map(|(_, f)| f).collect();
        out += &format!(
            "{name}: functions over 60 lines outside tests: {}\n",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    }
    println!("{out}");
}

/// The functions of `file` longer than 60 lines, outside its `#[cfg(test)]` module, with their
/// lengths: from a line that opens a `fn` to the `}` at its indentation.
fn long_functions(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.trim_start() == "#[cfg(test)]")
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines[..end].iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let words: Vec<&str> = body.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let prefix_ok = words[..at]
            .iter()
            .all(|w| w.starts_with("pub") || ["async", "const", "unsafe"].contains(w));
        if !prefix_ok || body.ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        let Some(len) = lines[i + 1..end].iter().position(|l| *l == close) else {
            continue;
        };
        if len + 2 > 60 {
            let name = words
                .get(at + 1)
                .map_or("", |w| w.split(['(', '<']).next().unwrap_or(w));
            out.push((len + 2, name.to_string()));
        }
    }
    out
}

fn line_count(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |text| text.lines().count())
}

#[test]
fn the_reader_sees_imports_of_every_form() {
    let text = "use crate::a::b;\nuse crate::{c::d, e::{f, g}};\n// crate::h::i in a comment\n\
                fn f() { super::j::k(); crate::l::m::n(); }\nuse super::{o, p::q};";
    let module = vec!["x".to_string(), "y".to_string()];
    let found: BTreeSet<String> = paths_in(text, &module)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    let want = [
        "a::b", "c::d", "e::f", "e::g", "x::j::k", "l::m::n", "x::o", "x::p::q",
    ];
    assert_eq!(found, want.iter().map(|s| s.to_string()).collect());
}

/// The module graph's circles: each strongly connected set of more than one module, as
/// `a, b, c`; modules are paths of `depth` segments.
fn circles(crate_dir: &Path, depth: usize) -> Vec<String> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, module) in sources(crate_dir) {
        if module.len() < depth {
            continue;
        }
        let from = room(&module, depth);
        for import in imports(&file, &module) {
            let to = room(&import, depth);
            if import.len() >= depth && to != from {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    strongly_connected(&graph)
        .into_iter()
        .filter(|set| set.len() > 1)
        .map(|set| set.into_iter().collect::<Vec<_>>().join(", "))
        .collect()
}

/// Tarjan's algorithm, recursive (the graphs are a few hundred modules).
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let i = w.index.len();
        w.index.insert(v, i);
        w.low.insert(v, i);
        w.stack.push(v);
        w.on_stack.insert(v);
        for u in w.graph.get(v).into_iter().flatten() {
            if !w.index.contains_key(u.as_str()) {
                visit(w, u);
                let low = w.low[u.as_str()].min(w.low[v]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(u.as_str()) {
                let low = w.index[u.as_str()].min(w.low[v]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut set = BTreeSet::new();
            while let Some(u) = w.stack.pop() {
                w.on_stack.remove(u);
                set.insert(u.to_string());
                if u == v {
                    break;
                }
            }
            w.found.push(set);
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.found
}

/// A module's layer as its place in `LOADGEN_LAYERS` (0 the top); `None` for the root files.
fn layer_of(module: &[String]) -> Option<usize> {
    position(LOADGEN_LAYERS, module)
}

/// A module's place in `layers` (0 the top) by its first name; `None` for the root files.
fn position(layers: &[&str], module: &[String]) -> Option<usize> {
    let first = module.first()?;
    layers.iter().position(|l| l == first)
}

/// Every source file under `dir` with its module path (`generator/plan.rs` is
/// `generator::plan`, `generator/corpus/mod.rs` is `generator::corpus`; the root files none).
fn sources(dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(dir).expect("under its crate");
                let mut module: Vec<String> = rel
                    .with_extension("")
                    .iter()
                    .map(|s| s.to_string_lossy().into_owned())
                    .collect();
                if module.last().is_some_and(|m| m == "mod") {
                    module.pop();
                }
                if module.len() == 1 && ["lib", "main"].contains(&module[0].as_str()) {
                    module.clear();
                }
                out.push((path, module));
            }
        }
    }
    out.sort();
    out
}

/// The module paths `file` (module `module`) names through `crate::` or `super::`.
fn imports(file: &Path, module: &[String]) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    paths_in(&text, module)
}

fn paths_in(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let code: String = text
        .lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    for (anchor, base) in [("crate::", Vec::new()), ("super::", parent(module))] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(anchor) {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + anchor.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let mut base = base.clone();
            let mut tail = rest;
            // `super::super::x`
            while let Some(t) = tail.strip_prefix("super::").filter(|_| anchor == "super::") {
                base.pop();
                tail = t;
            }
            group(tail, &base, &mut found);
        }
    }
    found
}

/// Reads one path (or a `{…}` group of them) at the start of `text`, each prefixed with `base`.
fn group(text: &str, base: &[String], found: &mut Vec<Vec<String>>) -> usize {
    let text_start = text.len();
    let mut text = text.trim_start();
    if let Some(inner) = text.strip_prefix('{') {
        let mut rest = inner;
        loop {
            rest = rest.trim_start();
            if let Some(after) = rest.strip_prefix('}') {
                return text_start - after.len();
            }
            let used = group(rest, base, found);
            rest = rest[used..].trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest);
            if used == 0 && !rest.starts_with('}') {
                return text_start - rest.len();
            }
        }
    }
    let mut path = base.to_vec();
    loop {
        let end = text
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(text.len());
        if end == 0 {
            break;
        }
        let name = &text[..end];
        if name != "self" {
            path.push(name.to_string());
        }
        text = &text[end..];
        match text.strip_prefix("::") {
            Some(after) if after.starts_with('{') => {
                let used = group(after, &path, found);
                return text_start - (after.len() - used);
            }
            Some(after) => text = after,
            None => break,
        }
    }
    if !path.is_empty() {
        found.push(path);
    }
    text_start - text.len()
}

fn parent(module: &[String]) -> Vec<String> {
    module[..module.len().saturating_sub(1)].to_vec()
}

/// The first `depth` segments of a module path, joined.
fn room(module: &[String], depth: usize) -> String {
    module[..depth.min(module.len())].join("::")
}

fn relative(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir).unwrap_or(file).display().to_string()
}

fn lines<T: std::fmt::Display>(items: &[T]) -> String {
    items.iter().map(|i| format!("  {i}\n")).collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}
