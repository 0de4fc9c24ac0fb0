//! Tables of folded stacks: the functions holding the most weight (self and total share), and
//! where threads waited. The CPU profile's report and the memory profile's share them.

use super::table::Table;
use crate::results::profile::Folded;

/// The functions holding the most of `folded`: self and total share.
pub fn top_table(folded: &Folded, n: usize) -> Table {
    rows_table(folded, folded.top(n), "self")
}

/// Where the threads asked to wait: the functions under the kernel's frames and the reason,
/// with their share of the time off a CPU.
pub fn waits_table(folded: &Folded, n: usize) -> Table {
    let kernel_or_reason = |f: &str| f.ends_with("_[k]") || f.starts_with("[off-cpu");
    rows_table(folded, folded.top_above(n, kernel_or_reason), "waits here")
}

fn rows_table(folded: &Folded, rows: Vec<(String, u64, u64)>, own: &str) -> Table {
    let total = folded.total().max(1) as f64;
    let mut table = Table::new(&["function", own, "total"]);
    for (name, own, all) in rows {
        table.push(vec![
            name,
            format!("{:.1}%", own as f64 / total * 100.0),
            format!("{:.1}%", all as f64 / total * 100.0),
        ]);
    }
    table
}
