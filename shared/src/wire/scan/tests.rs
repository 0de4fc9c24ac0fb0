use super::{stop_in, Scan, MAX_DEPTH};

#[test]
fn a_string_stops_at_its_first_quote_escape_or_control_byte_at_any_offset() {
    let text = "ab\u{e9}cdefgh\u{1f600}ijklmnopqrstuvwxyz".as_bytes();
    for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
        for at in 0..text.len() {
            let mut bytes = text.to_vec();
            bytes[at] = stop;
            // A later stop does not hide the first.
            bytes.push(b'"');
            assert_eq!(stop_in(&bytes), Some(at), "{stop:#x} at {at}");
        }
    }
    assert_eq!(stop_in(text), None);
    assert_eq!(stop_in(b"\x7f \xff\xfe"), None);
    assert_eq!(stop_in(b"\x7f\x80\xa0\xa2\xdc\xff\xfe\x21\x7f \xe9"), None);
}

fn whole(text: &str) -> Option<u64> {
    let mut scan = Scan::new(text.as_bytes())?;
    let n = scan.whole_number()?;
    scan.at_end().then_some(n)
}

#[test]
fn a_whole_number_is_plain_digits_that_fit_any_reading() {
    assert_eq!(whole("0"), Some(0));
    assert_eq!(whole("16"), Some(16));
    assert_eq!(
        whole("9999999999999999999"),
        Some(9_999_999_999_999_999_999)
    );
    // 20 digits may not fit u64; a leading zero, a fraction, an exponent or a sign are left to
    // a full parser.
    for text in [
        "18446744073709551615",
        "016",
        "00",
        "1.0",
        "1e3",
        "1E3",
        "-1",
        "",
        "+1",
    ] {
        assert_eq!(whole(text), None, "{text}");
    }
}

#[test]
fn values_are_skipped_by_the_rfc_grammar() {
    let skips = |text: &str| {
        Scan::new(text.as_bytes()).is_some_and(|mut scan| {
            scan.whitespace();
            scan.value(0).is_some() && scan.at_end()
        })
    };
    for good in [
        r#"{"a":[1,-0.5e+3,true,false,null,"x\n\u00e9\ud800"],"b":{}}"#,
        " [ ] ",
        r#""\"\\\/\b\f\n\r\t""#,
    ] {
        assert!(skips(good), "{good}");
    }
    for bad in [
        r#"{"a":1,}"#,
        "[1,]",
        "01",
        "1.",
        ".5",
        "1e",
        r#""\x""#,
        r#""\u12G4""#,
        "\"a\u{1}\"",
        "tru",
        "{1:2}",
        "[1 2]",
    ] {
        assert!(!skips(bad), "{bad}");
    }
    assert!(Scan::new(b"\"\xff\"").is_none());
}

#[test]
fn nesting_stops_past_the_depth_limit() {
    let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let depth_ok = |levels: usize| {
        let text = nested(levels);
        let mut scan = Scan::new(text.as_bytes()).unwrap();
        scan.value(0).is_some()
    };
    assert!(depth_ok(MAX_DEPTH as usize));
    assert!(!depth_ok(MAX_DEPTH as usize + 1));
}

#[test]
fn items_are_opened_and_separated() {
    let mut scan = Scan::new(br#"{ "k" : [ ] , "l":null }"#).unwrap();
    assert_eq!(scan.open(b'{', b'}'), Some(true));
    assert_eq!(scan.key(), Some((&b"k"[..], false)));
    assert_eq!(scan.open(b'[', b']'), Some(false));
    assert_eq!(scan.more(b'}'), Some(true));
    assert_eq!(scan.key(), Some((&b"l"[..], false)));
    assert_eq!(scan.null(), Some(true));
    assert_eq!(scan.more(b'}'), Some(false));
    assert!(scan.at_end());
    let mut escaped = Scan::new(br#""a\tb" "ab""#).unwrap();
    assert_eq!(escaped.plain_string(), None);
    escaped.whitespace();
    assert_eq!(escaped.plain_string(), Some("ab"));
}
