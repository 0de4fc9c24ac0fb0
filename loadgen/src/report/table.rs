//! One table model, three renderings: aligned text for the terminal, Markdown for write-ups,
//! CSV for spreadsheets. Every report that prints a table builds a [`Table`].

/// Rows of cells under a header.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        widths
    }

    /// Columns padded to their widest cell; the first left-aligned, the rest right-aligned.
    pub fn to_text(&self) -> String {
        let widths = self.widths();
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                if i > 0 {
                    out.push_str("  ");
                }
                if i == 0 {
                    out.push_str(&format!("{cell:<w$}"));
                } else {
                    out.push_str(&format!("{cell:>w$}"));
                }
            }
            out.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.header);
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }

    /// A GitHub-flavoured Markdown table (pipes in cells escaped).
    pub fn to_markdown(&self) -> String {
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&self.header);
        let rule: Vec<&str> = (0..self.header.len())
            .map(|i| if i == 0 { "---" } else { "---:" })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }

    /// RFC 4180 CSV: fields with a comma, quote or line break are quoted.
    pub fn to_csv(&self) -> String {
        let field = |c: &String| {
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        };
        let line =
            |cells: &[String]| cells.iter().map(field).collect::<Vec<_>>().join(",") + "\r\n";
        let mut out = line(&self.header);
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new(&["gateway", "added"]);
        t.push(vec!["nginx".into(), "+58 µs".into()]);
        t.push(vec!["a|b, \"c\"".into(), "1".into()]);
        t
    }

    #[test]
    fn text_aligns_columns() {
        let text = table().to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "gateway    added");
        assert_eq!(lines[1], "nginx     +58 µs");
    }

    #[test]
    fn markdown_and_csv_escape_what_they_must() {
        let md = table().to_markdown();
        assert!(md.starts_with("| gateway | added |\n|---|---:|\n"));
        assert!(md.contains("| a\\|b, \"c\" | 1 |"));
        let csv = table().to_csv();
        assert_eq!(
            csv,
            "gateway,added\r\nnginx,+58 µs\r\n\"a|b, \"\"c\"\"\",1\r\n"
        );
    }
}
