//! An error and its causes as one line for people: each cause appended once, skipped when the
//! message above already says it (many errors repeat their source in their own message).

use std::error::Error;

/// `err`, then each cause not already contained in the text so far, joined by `": "`.
pub fn one_line(err: &(dyn Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// Like `eprintln!`, but a failed write (stderr a pipe its reader closed) is ignored instead of
/// panicking: a message must never turn a clean exit into a crash.
#[macro_export]
macro_rules! say {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error, bool);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            if self.1 {
                write!(f, "cannot read x: {}", self.0)
            } else {
                write!(f, "cannot read x")
            }
        }
    }

    impl Error for Outer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn causes_appear_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(one_line(&Outer(io(), true)), "cannot read x: no such file");
        assert_eq!(one_line(&Outer(io(), false)), "cannot read x: no such file");
    }
}
