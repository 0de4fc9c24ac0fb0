//! A connection's request target, kept from its first request: a benchmark's connection names
//! the same path again and again, and building a `Uri` checks every byte of it (about 330
//! instructions for `/v1/chat/completions`), where comparing it with the kept one costs a tenth.

use bytes::Bytes;
use hyper::Uri;

/// The first request's target of a connection, copied once (two allocations a connection: the
/// copy, and its promotion to shared bytes when first cloned); a later request with another
/// target gets a `Uri` sharing the head's bytes, as without it, so a connection whose paths
/// change allocates nothing more. Only origin-form targets (`/path?query`) reach the own
/// server (`head::parse` hands any other to hyper), so the path and query are the whole `Uri`
/// and equal bytes give an equal `Uri`.
#[derive(Debug, Default)]
pub struct Target(Option<Uri>);

impl Target {
    /// The `Uri` of `path` (a request target as it was read), or `None` if it is not one.
    /// `shared` gives the same bytes shared with the head they were read in.
    pub fn uri(&mut self, path: &[u8], shared: impl FnOnce() -> Bytes) -> Option<Uri> {
        match &self.0 {
            Some(kept) if kept.path_and_query().map(|p| p.as_str().as_bytes()) == Some(path) => {
                Some(kept.clone())
            }
            Some(_) => Uri::from_maybe_shared(shared()).ok(),
            None => {
                let uri = Uri::from_maybe_shared(Bytes::copy_from_slice(path)).ok()?;
                self.0 = Some(uri.clone());
                Some(uri)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_target_is_kept_and_others_are_read_each_time() {
        let mut target = Target::default();
        let shared = |path: &'static str| move || Bytes::from_static(path.as_bytes());
        let first = "/v1/chat/completions";
        assert_eq!(target.uri(first.as_bytes(), shared(first)).unwrap(), first);
        assert_eq!(
            target.uri(first.as_bytes(), || unreachable!()).unwrap(),
            first
        );
        let other = "/v1/embeddings?x=1";
        assert_eq!(target.uri(other.as_bytes(), shared(other)).unwrap(), other);
        // The first is still the one kept.
        assert_eq!(
            target.uri(first.as_bytes(), || unreachable!()).unwrap(),
            first
        );
        assert!(target.uri(b"/a b", shared("/a b")).is_none());
    }
}
