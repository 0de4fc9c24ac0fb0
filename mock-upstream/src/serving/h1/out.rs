//! The write buffers: each connection's own, and the thread's, lent to each answer in turn.

use std::cell::RefCell;

use bytes::BytesMut;

/// A write buffer starts this large (a chat completion and its head fit) and grows for a
/// larger answer; it is kept between answers.
pub(super) const WRITE_BUFFER: usize = 2 * 1024;

thread_local! {
    /// The thread's write buffer, lent to each answer in turn (see [`trade_out`]).
    static OUT: RefCell<BytesMut> = RefCell::new(BytesMut::with_capacity(WRITE_BUFFER));
}

/// Trades `out`, emptied, for the thread's write buffer: called before an answer and again
/// after it, the answer is written from the buffer the last answer on this thread was, still
/// in the cache, rather than from its own connection's, cold once 64 connections take turns
/// (by callgrind's cache model, 13 of 60 first-level write misses a chat completion). An
/// answer that waits (a stream, a full socket) keeps the buffer it holds; the next one on the
/// thread takes the one in the thread's place, so each connection always holds one buffer.
pub fn trade_out(out: &mut BytesMut) {
    out.clear();
    OUT.with_borrow_mut(|spare| std::mem::swap(spare, out));
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;

    #[test]
    fn each_answer_writes_into_the_threads_buffer_emptied_and_each_connection_holds_one() {
        let mut a = BytesMut::with_capacity(64);
        let own = a.as_ptr();
        a.put_slice(b"left over");
        trade_out(&mut a);
        assert!(a.is_empty());
        assert_ne!(a.as_ptr(), own);
        a.put_slice(b"an answer");
        let hot = a.as_ptr();
        trade_out(&mut a);
        assert_eq!(
            (a.as_ptr(), a.len()),
            (own, 0),
            "its own buffer back, emptied"
        );
        // The next answer, on another connection, takes the buffer the last one wrote, emptied.
        let mut b = BytesMut::with_capacity(64);
        trade_out(&mut b);
        assert_eq!((b.as_ptr(), b.len()), (hot, 0));
    }
}
