//! The resources of the system under test (`--sample-pid`), labelled by phase, as a table.

use crate::results::resources::ResourceReport;

use super::table::Table;

/// The resources sampled, labelled by phase.
pub fn table(resources: &[ResourceReport]) -> Table {
    let mut table = Table::new(&[
        "process",
        "idle CPU (cores)",
        "idle RSS",
        "load CPU mean",
        "load CPU peak",
        "load RSS peak",
    ]);
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1 << 20) as f64);
    for r in resources {
        table.push(vec![
            format!("{} ({})", r.name, r.source),
            format!("{:.2}", r.idle_cpu_cores),
            mib(r.idle_rss_bytes),
            format!("{:.2}", r.load_cpu_cores_mean),
            format!("{:.2}", r.load_cpu_cores_peak),
            mib(r.load_rss_peak_bytes),
        ]);
    }
    table
}
