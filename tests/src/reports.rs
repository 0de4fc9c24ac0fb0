//! Checks of a result file's reports: every format is what it claims to be, and what a gateway
//! declared (its recording level) is disclosed.

#![allow(clippy::unwrap_used)] // checks for tests: a panic is the failure report

use loadgen::options::Format;
use loadgen::report::render::render;

/// The gateway `slow` carries its declared recording level in the JSON and in the write-up.
pub fn check_disclosure(path: &std::path::Path) {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let targets = json["targets"]
        .as_array()
        .or(json["plan"]["targets"].as_array())
        .unwrap();
    assert_eq!(targets[0]["recording"], serde_json::Value::Null);
    let slow = targets.iter().find(|t| t["name"] == "slow").unwrap();
    assert_eq!(slow["recording"], "full");
    let md = render(path, Format::Md).unwrap();
    assert!(md.contains("(adds 2 ms; recording full)"), "{md}");
}

/// Renders `path` in every format and checks each is what it claims to be.
pub fn check_reports(path: &std::path::Path, csv_header: &str) {
    let md = render(path, Format::Md).unwrap();
    assert!(md.starts_with("# "), "{md}");
    assert!(md.contains("|---|"), "{md}");
    assert!(md.contains("## Disclosure"), "{md}");
    // What the JSON discloses, the write-up does too.
    assert!(md.contains("open-file limit"), "{md}");
    let csv = render(path, Format::Csv).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(csv_header), "{header}");
    let columns = header.split(',').count();
    for line in lines {
        // Numbers-only rows here, so no quoted commas.
        assert_eq!(line.split(',').count(), columns, "{line}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&render(path, Format::Json).unwrap()).unwrap();
    assert!(json["schema"]
        .as_str()
        .unwrap()
        .starts_with("gatebench.loadgen."));
    let html = render(path, Format::Html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg"));
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    // Self-contained: no script and nothing fetched.
    for banned in ["<script", " src=", " href=", "url("] {
        assert!(!html.contains(banned), "the page contains {banned}");
    }
}
