//! Flame graphs of folded stacks, drawn by inferno as static SVG (no script, so they sit inside
//! the self-contained HTML report and open anywhere): on-CPU, off-CPU, and the difference
//! between two runs.

use inferno::flamegraph::color::{BasicPalette, Palette};
use inferno::flamegraph::Options;

use crate::results::profile::Folded;
use crate::results::profile::Profile;

/// What a flame graph shows, which sets its colours and the unit of its widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Samples of stacks running on a CPU.
    OnCpu,
    /// Microseconds threads spent off a CPU, by the stack they left from.
    OffCpu,
    /// Bytes allocated (or still live), by the stack that allocated them.
    Bytes,
}

fn options(title: &str, subtitle: &str, kind: Kind) -> Options<'static> {
    let mut options = Options::default();
    options.title = title.to_string();
    options.subtitle = Some(subtitle.to_string());
    options.no_javascript = true;
    options.hash = true;
    options.deterministic = true;
    options.image_width = Some(1100);
    // Frames narrower than half a pixel (under 0.05% of the weight) are left out: unreadable,
    // and the bulk of a deep profile's page (a Node.js gateway's: 13,000 frames of 13,500).
    options.min_width = 0.5;
    let (palette, unit) = match kind {
        Kind::OnCpu => (BasicPalette::Hot, "samples"),
        Kind::OffCpu => (BasicPalette::Io, "µs"),
        Kind::Bytes => (BasicPalette::Mem, "bytes"),
    };
    options.colors = Palette::Basic(palette);
    options.count_name = unit.to_string();
    options
}

/// The flame graph of `folded` as SVG, or `None` when it holds no stacks.
pub fn flame_graph(folded: &Folded, title: &str, subtitle: &str, kind: Kind) -> Option<String> {
    if folded.is_empty() {
        return None;
    }
    let text = folded.to_text();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options(title, subtitle, kind), text.lines(), &mut svg)
        .ok()?;
    String::from_utf8(svg).ok().map(without_script)
}

/// The flame graph of a profile's stacks of `kind`, titled with the gateway's name.
pub fn of_profile(profile: &Profile, kind: Kind) -> Option<String> {
    let folded = profile.stacks(kind)?;
    let (title, what) = match kind {
        Kind::Bytes => return None,
        Kind::OnCpu => ("on-CPU", "samples of the stacks running on a CPU"),
        Kind::OffCpu => (
            "off-CPU",
            "µs off a CPU, by the stack each thread left from; the top frame says why",
        ),
    };
    let title = format!("{}: {title}", profile.gateway);
    let subtitle = format!(
        "{} {what}; {} Hz, {} stacks, {:.0} s sampled",
        folded.total(),
        profile.frequency_hz,
        profile.call_graph.name(),
        profile.recorded_s
    );
    flame_graph(folded, &title, &subtitle, kind)
}

/// The differential flame graph of `before` and `after`: widths from `after`, red where a
/// stack grew, blue where it shrank, with `before` scaled to `after`'s total first (two runs
/// of the same load and window differ in their count of samples by chance).
pub fn differential(
    before: &Folded,
    after: &Folded,
    title: &str,
    subtitle: &str,
    kind: Kind,
) -> Option<String> {
    if before.is_empty() && after.is_empty() {
        return None;
    }
    let (before, after) = (before.to_text(), after.to_text());
    let mut lines = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options {
            normalize: true,
            strip_hex: true,
        },
        before.as_bytes(),
        after.as_bytes(),
        &mut lines,
    )
    .ok()?;
    let lines = String::from_utf8(lines).ok()?;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options(title, subtitle, kind), lines.lines(), &mut svg)
        .ok()?;
    String::from_utf8(svg).ok().map(without_script)
}

/// inferno's SVG without its script: with `no_javascript` it still writes a `<script>` of
/// settings and an `onload` calling a function it left out. Every frame keeps its `<title>`
/// (the name, count and share shown on hover), which needs no script.
fn without_script(svg: String) -> String {
    let mut svg = svg.replacen(" onload=\"init(evt)\"", "", 1);
    if let (Some(start), Some(end)) = (svg.find("<script"), svg.find("</script>")) {
        if start < end {
            svg.replace_range(start..end + "</script>".len(), "");
        }
    }
    svg
}

/// An SVG document as an element to put inside HTML: without its XML declaration and doctype.
pub fn inline(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |at| &svg[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flame_graphs_are_static_svg_naming_the_frames() {
        let folded = Folded::parse("gw;main;hot_loop 90\ngw;main;read_[k] 10\n").unwrap();
        let svg = flame_graph(&folded, "On-CPU", "100 samples", Kind::OnCpu).unwrap();
        let svg = inline(&svg);
        assert!(svg.starts_with("<svg"), "{}", &svg[..60]);
        assert!(
            svg.contains("hot_loop") && svg.contains("90 samples"),
            "{svg}"
        );
        assert!(
            !svg.contains("<script"),
            "no script: the page must open anywhere"
        );
        assert!(flame_graph(&Folded::default(), "t", "s", Kind::OffCpu).is_none());
    }

    #[test]
    fn a_differential_graph_marks_what_grew() {
        let before = Folded::parse("gw;main;parse 50\ngw;main;send 50\n").unwrap();
        let after = Folded::parse("gw;main;parse 80\ngw;main;send 20\n").unwrap();
        let svg = differential(&before, &after, "diff", "s", Kind::OnCpu).unwrap();
        // inferno names the change of each frame in its tooltip.
        assert!(svg.contains("parse") && svg.contains("+30"), "{svg}");
    }
}
