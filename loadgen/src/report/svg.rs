//! Plots drawn as inline SVG, so an HTML report is one self-contained file that needs no script
//! and no network to be read: line plots (linear or log axes) and interval ("forest") plots.

use std::fmt::Write as _;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 340.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 45.0;

/// Colours of successive series (colour-blind-safe, from the Okabe-Ito palette).
const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
];

/// An axis: its label, whether it is logarithmic, and optional named ticks.
#[derive(Debug, Clone, Default)]
pub struct Axis {
    pub label: String,
    pub log: bool,
    /// Ticks at these values with these labels; default ticks when empty.
    pub ticks: Vec<(f64, String)>,
}

/// A named sequence of points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line plot with markers.
#[derive(Debug, Clone)]
pub struct LinePlot {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Vertical lines at these x values, each with its label (a stage's start).
    pub marks: Vec<(f64, String)>,
}

/// One row of an interval plot: a label, an estimate and its interval.
#[derive(Debug, Clone)]
pub struct IntervalRow {
    pub label: String,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// Escapes text for XML content and attributes.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Maps data values to pixels along one axis.
struct Scale {
    min: f64,
    max: f64,
    from: f64,
    to: f64,
    log: bool,
}

impl Scale {
    fn new(values: impl Iterator<Item = f64>, log: bool, from: f64, to: f64) -> Scale {
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
            min = min.min(v);
            max = max.max(v);
        }
        if !min.is_finite() {
            (min, max) = (1.0, 10.0);
        }
        if log {
            // Whole decades around the data.
            min = 10f64.powf(min.log10().floor());
            max = 10f64.powf(max.log10().ceil().max(min.log10() + 1.0));
        } else if (max - min).abs() < f64::EPSILON {
            (min, max) = (min - 1.0, max + 1.0);
        } else {
            let pad = (max - min) * 0.05;
            (min, max) = (min - pad, max + pad);
        }
        Scale {
            min,
            max,
            from,
            to,
            log,
        }
    }

    fn at(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(f64::MIN_POSITIVE).log10() - self.min.log10())
                / (self.max.log10() - self.min.log10())
        } else {
            (v - self.min) / (self.max - self.min)
        };
        self.from + t * (self.to - self.from)
    }

    /// Default ticks: 1-2-5 within each decade for log axes, about six round steps for linear.
    fn ticks(&self) -> Vec<(f64, String)> {
        let mut ticks = Vec::new();
        if self.log {
            let mut decade = self.min;
            while decade <= self.max * 1.0001 {
                for m in [1.0, 2.0, 5.0] {
                    let v = decade * m;
                    if v <= self.max * 1.0001 {
                        ticks.push((v, number(v)));
                    }
                }
                decade *= 10.0;
            }
        } else {
            let raw = (self.max - self.min) / 6.0;
            let magnitude = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * magnitude)
                .find(|s| *s >= raw)
                .unwrap_or(raw);
            let mut v = (self.min / step).ceil() * step;
            while v <= self.max {
                ticks.push((v, number(v)));
                v += step;
            }
        }
        ticks
    }
}

/// A number for a tick: no needless decimals.
fn number(v: f64) -> String {
    if v.abs() < 1e-9 {
        return "0".into();
    }
    if v.abs() >= 1.0 && (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

fn frame(out: &mut String, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{t}"><title>{t}</title><rect width="100%" height="100%" fill="white"/><text x="{x}" y="18" font-size="14" font-weight="bold">{t}</text>"#,
        t = escape(title),
        x = LEFT,
    );
}

impl LinePlot {
    pub fn to_svg(&self) -> String {
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let xs = points().map(|p| p.0).chain(self.marks.iter().map(|m| m.0));
        let x = Scale::new(xs, self.x.log, LEFT, WIDTH - RIGHT);
        let y = Scale::new(points().map(|p| p.1), self.y.log, HEIGHT - BOTTOM, TOP);
        let mut out = String::new();
        frame(&mut out, &self.title);
        axes(&mut out, &x, &y, &self.x, &self.y);
        for (at, label) in &self.marks {
            let px = x.at(*at);
            if !(LEFT - 0.5..=WIDTH - RIGHT + 0.5).contains(&px) {
                continue;
            }
            let _ = write!(
                out,
                r##"<line x1="{px:.1}" y1="{}" x2="{px:.1}" y2="{}" stroke="#999" stroke-dasharray="4 3"/><text x="{:.1}" y="{}" font-size="11" fill="#555">{}</text>"##,
                HEIGHT - BOTTOM,
                TOP,
                px + 3.0,
                TOP + 12.0,
                escape(label)
            );
        }
        for (i, series) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let path: Vec<String> = series
                .points
                .iter()
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .map(|&(a, b)| format!("{:.1},{:.1}", x.at(a), y.at(b)))
                .collect();
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
            for p in &path {
                let (cx, cy) = p.split_once(',').unwrap_or(("0", "0"));
                let _ = write!(
                    out,
                    r#"<circle cx="{cx}" cy="{cy}" r="3" fill="{colour}"/>"#
                );
            }
            let ly = TOP + 10.0 + 18.0 * i as f64;
            let lx = WIDTH - RIGHT + 15.0;
            let _ = write!(
                out,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}" font-size="12">{}</text>"#,
                lx + 18.0,
                lx + 24.0,
                ly + 4.0,
                escape(&series.name)
            );
        }
        out.push_str("</svg>");
        out
    }
}

fn axes(out: &mut String, x: &Scale, y: &Scale, x_axis: &Axis, y_axis: &Axis) {
    let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
    let _ = write!(
        out,
        r##"<g stroke="#888" stroke-width="1"><line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/></g>"##
    );
    let x_ticks = if x_axis.ticks.is_empty() {
        x.ticks()
    } else {
        x_axis.ticks.clone()
    };
    for (v, label) in x_ticks {
        let px = x.at(v);
        if !(x0 - 0.5..=x1 + 0.5).contains(&px) {
            continue;
        }
        let _ = write!(
            out,
            r##"<line x1="{px:.1}" y1="{y0}" x2="{px:.1}" y2="{y1}" stroke="#eee"/><text x="{px:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
            y0 + 15.0,
            escape(&label)
        );
    }
    let y_ticks = if y_axis.ticks.is_empty() {
        y.ticks()
    } else {
        y_axis.ticks.clone()
    };
    for (v, label) in y_ticks {
        let py = y.at(v);
        if !(y1 - 0.5..=y0 + 0.5).contains(&py) {
            continue;
        }
        let _ = write!(
            out,
            r##"<line x1="{x0}" y1="{py:.1}" x2="{x1}" y2="{py:.1}" stroke="#eee"/><text x="{}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            x0 - 6.0,
            py + 4.0,
            escape(&label)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text><text transform="translate(16,{}) rotate(-90)" font-size="12" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        HEIGHT - 8.0,
        escape(&x_axis.label),
        (y0 + y1) / 2.0,
        escape(&y_axis.label)
    );
}

/// Intervals as horizontal bars with a dot at the estimate, and a line at zero.
pub fn interval_plot(title: &str, x_label: &str, rows: &[IntervalRow]) -> String {
    let row_height = 22.0;
    let height = TOP + BOTTOM + row_height * rows.len().max(1) as f64;
    let label_width = 260.0;
    let values = rows
        .iter()
        .flat_map(|r| [r.low, r.high, r.estimate])
        .chain([0.0]);
    let x = Scale::new(values, false, label_width, WIDTH - 30.0);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{t}"><title>{t}</title><rect width="100%" height="100%" fill="white"/><text x="10" y="18" font-size="14" font-weight="bold">{t}</text>"#,
        t = escape(title)
    );
    let bottom = height - BOTTOM;
    for (v, label) in x.ticks() {
        let px = x.at(v);
        let _ = write!(
            out,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{bottom}" stroke="#eee"/><text x="{px:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
            bottom + 15.0,
            escape(&label)
        );
    }
    let zero = x.at(0.0);
    let _ = write!(
        out,
        r##"<line x1="{zero:.1}" y1="{TOP}" x2="{zero:.1}" y2="{bottom}" stroke="#888" stroke-dasharray="4 3"/>"##
    );
    for (i, row) in rows.iter().enumerate() {
        let cy = TOP + row_height * (i as f64 + 0.5);
        let colour = if row.low <= 0.0 && row.high >= 0.0 {
            "#888888"
        } else {
            PALETTE[0]
        };
        let _ = write!(
            out,
            r#"<text x="{}" y="{:.1}" font-size="12" text-anchor="end">{}</text><line x1="{:.1}" y1="{cy:.1}" x2="{:.1}" y2="{cy:.1}" stroke="{colour}" stroke-width="3"/><circle cx="{:.1}" cy="{cy:.1}" r="4" fill="{colour}"/>"#,
            label_width - 10.0,
            cy + 4.0,
            escape(&row.label),
            x.at(row.low),
            x.at(row.high),
            x.at(row.estimate)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text></svg>"#,
        (label_width + WIDTH - 30.0) / 2.0,
        height - 8.0,
        escape(x_label)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scales_cover_whole_decades_and_map_monotonically() {
        let s = Scale::new([35.0, 4_200.0].into_iter(), true, 0.0, 300.0);
        assert_eq!((s.min, s.max), (10.0, 10_000.0));
        assert!((s.at(10.0) - 0.0).abs() < 1e-9);
        assert!((s.at(100.0) - 100.0).abs() < 1e-9);
        assert!((s.at(10_000.0) - 300.0).abs() < 1e-9);
        let ticks: Vec<String> = s.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(ticks[..4], ["10", "20", "50", "100"]);
    }

    #[test]
    fn plots_are_self_contained_svg_with_escaped_text() {
        let plot = LinePlot {
            marks: Vec::new(),
            title: "a < b & c".into(),
            x: Axis::default(),
            y: Axis {
                log: true,
                ..Axis::default()
            },
            series: vec![Series {
                name: "direct".into(),
                points: vec![(1.0, 100.0), (2.0, 250.0), (3.0, f64::NAN)],
            }],
        };
        let svg = plot.to_svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>"));
        assert!(svg.contains("a &lt; b &amp; c"));
        assert_eq!(
            svg.matches("<circle").count(),
            2,
            "the NaN point is left out"
        );
        let forest = interval_plot(
            "added",
            "µs",
            &[IntervalRow {
                label: "nginx chat e2e".into(),
                estimate: 16.0,
                low: 11.0,
                high: 19.0,
            }],
        );
        assert!(forest.contains("nginx chat e2e") && forest.ends_with("</svg>"));
    }
}
