//! `loadgen profile --diff`'s page and terminal summary: the differential flame graph of two
//! profiles, the functions whose share of self time moved most, and the two runs' latency side
//! by side when their results were found.

use std::path::PathBuf;

use crate::report::flame::{self, Kind};
use crate::report::html::{page, table_html};
use crate::report::table::Table;
use crate::results::profile::{Folded, ProfileResult};

/// One side of the difference.
#[derive(Debug)]
pub struct Side {
    pub path: PathBuf,
    pub folded: Folded,
    /// The result the folded file was written beside, when it is there.
    pub result: Option<ProfileResult>,
}

impl Side {
    fn label(&self) -> String {
        self.path.display().to_string()
    }
}

/// The functions whose share of the leaf weight (self time) moved most between `before` and
/// `after`: (function, share before, share after), largest change first.
pub fn moved(before: &Folded, after: &Folded, n: usize) -> Vec<(String, f64, f64)> {
    let shares = |f: &Folded| -> std::collections::HashMap<String, f64> {
        let total = f.total().max(1) as f64;
        f.top(usize::MAX)
            .into_iter()
            .map(|(name, own, _)| (name, own as f64 / total))
            .collect()
    };
    let (b, a) = (shares(before), shares(after));
    let mut names: Vec<&String> = b.keys().chain(a.keys()).collect();
    names.sort();
    names.dedup();
    let mut rows: Vec<(String, f64, f64)> = names
        .into_iter()
        .map(|n| {
            let get = |m: &std::collections::HashMap<String, f64>| m.get(n).copied().unwrap_or(0.0);
            (n.clone(), get(&b), get(&a))
        })
        .filter(|(_, b, a)| b != a)
        .collect();
    rows.sort_by(|x, y| {
        (y.2 - y.1)
            .abs()
            .total_cmp(&(x.2 - x.1).abs())
            .then(x.0.cmp(&y.0))
    });
    rows.truncate(n);
    rows
}

fn moved_table(before: &Folded, after: &Folded) -> Table {
    let mut table = Table::new(&["function", "self before", "self after", "change"]);
    for (name, b, a) in moved(before, after, 15) {
        table.push(vec![
            name,
            format!("{:.1}%", b * 100.0),
            format!("{:.1}%", a * 100.0),
            format!("{:+.1} points", (a - b) * 100.0),
        ]);
    }
    table
}

/// The two runs' latency (the sampled runs, and the unsampled runs' added latency where the
/// profile had a direct upstream), when their results are beside the folded files.
fn latency_table(sides: [&Side; 2]) -> Option<Table> {
    if sides.iter().all(|s| s.result.is_none()) {
        return None;
    }
    let mut table = Table::new(&[
        "run",
        "gateway",
        "samples / µs",
        "throughput (req/s)",
        "P50",
        "P99",
        "P99.9",
        "added P50",
        "added P99",
    ]);
    for (label, side) in ["before", "after"].into_iter().zip(sides) {
        let mut row = vec![label.to_string()];
        match &side.result {
            None => {
                row.push("(no result beside the folded file)".into());
                row.push(side.folded.total().to_string());
                row.extend(std::iter::repeat_n("-".to_string(), 6));
            }
            Some(view) => {
                row.push(view.profile.gateway.to_string());
                row.push(side.folded.total().to_string());
                row.extend(view.latency_cells());
            }
        }
        table.push(row);
    }
    Some(table)
}

/// The page (or, for a `.svg` path, the SVG alone) of the difference, and a summary for the
/// terminal.
pub fn render(b: &Side, a: &Side, kind: Kind, svg_only: bool) -> anyhow::Result<(String, String)> {
    let what = match kind {
        Kind::OnCpu => "on-CPU samples",
        Kind::OffCpu => "off-CPU µs",
        Kind::Bytes => "bytes",
    };
    let subtitle = format!(
        "widths: after ({} {what}); red grew, blue shrank against before ({} {what}, scaled to after)",
        a.folded.total(),
        b.folded.total()
    );
    let svg = flame::differential(
        &b.folded,
        &a.folded,
        "Differential flame graph",
        &subtitle,
        kind,
    )
    .ok_or_else(|| anyhow::anyhow!("both folded files are empty: nothing to draw"))?;
    let moved = moved_table(&b.folded, &a.folded);
    let mut terminal = format!(
        "before: {} ({} {what})\nafter:  {} ({} {what})\nfunctions whose share of self time moved most:\n{}",
        b.label(),
        b.folded.total(),
        a.label(),
        a.folded.total(),
        moved.to_text()
    );
    let latency = latency_table([b, a]);
    if let Some(t) = &latency {
        terminal.push_str(&format!("\nlatency of the two runs:\n{}", t.to_text()));
    }
    if svg_only {
        return Ok((svg, terminal));
    }
    let mut body = format!(
        "<p class=\"meta\">Before: <code>{}</code>. After: <code>{}</code>. Widths are the after run's; a frame is red where it grew and blue where it shrank, with the before run scaled to the after run's total first.</p>",
        crate::report::svg::escape(&b.label()),
        crate::report::svg::escape(&a.label())
    );
    if let Some(t) = &latency {
        body.push_str("<h2>Latency of the two runs</h2>");
        body.push_str(&table_html(t));
    }
    body.push_str("<h2>Differential flame graph</h2>");
    body.push_str(&format!(
        "<div class=\"figure\">{}</div>",
        flame::inline(&svg)
    ));
    body.push_str("<h2>Functions whose share of self time moved most</h2>");
    body.push_str(&table_html(&moved));
    Ok((page("Profile difference", &body), terminal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_that_grew_leads_the_moved_list() {
        let before = Folded::parse("gw;main;parse 50\ngw;main;send 50\n").unwrap();
        let after = Folded::parse("gw;main;parse 80\ngw;main;send 20\n").unwrap();
        let rows = moved(&before, &after, 5);
        assert_eq!(rows.len(), 2);
        assert!((rows[0].2 - rows[0].1).abs() > 0.29, "{rows:?}");
    }
}
