//! The one response body type of the mock: empty, a whole payload, or a stream.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use crate::answer::sse::SseStream;
use crate::catalog::payload::{Chunks, Payload};
use crate::catalog::FixedHeaders;

pin_project! {
    /// A response body. A whole payload has an exact size, so hyper sends `content-length`; a
    /// stream is sent chunked. It also names the answer's fixed header set, which the own
    /// HTTP/1.1 server writes pre-encoded and hyper's path turns into map entries.
    #[derive(Debug)]
    pub struct MockBody {
        #[pin]
        kind: Kind,
        fixed: Option<FixedHeaders>,
    }
}

pin_project! {
    #[project = KindProj]
    #[derive(Debug)]
    enum Kind {
        // Sent once: an empty payload is the end (taken by hyper, or copied out and consumed).
        Whole { payload: Payload },
        Stream { #[pin] stream: SseStream },
    }
}

impl MockBody {
    /// A body of one payload.
    #[inline]
    pub fn whole(payload: Payload) -> MockBody {
        MockBody {
            kind: Kind::Whole { payload },
            fixed: None,
        }
    }

    /// A body of shared bytes.
    pub fn bytes(bytes: &Bytes) -> MockBody {
        let mut payload = Payload::new();
        payload.push_bytes(bytes);
        MockBody::whole(payload)
    }

    /// A body of owned bytes (error bodies; not on the hot path).
    pub fn owned(bytes: Vec<u8>) -> MockBody {
        MockBody::bytes(&Bytes::from(bytes))
    }

    /// A streamed body.
    pub fn stream(stream: SseStream) -> MockBody {
        MockBody {
            kind: Kind::Stream { stream },
            fixed: None,
        }
    }

    /// The body of an answer that carries the fixed header set `fixed`.
    pub fn with_headers(mut self, fixed: FixedHeaders) -> MockBody {
        self.fixed = Some(fixed);
        self
    }

    /// The fixed header set the answer carries, if any.
    pub fn fixed_headers(&self) -> Option<FixedHeaders> {
        self.fixed
    }

    /// True for a stream set to break with a mid-stream fault.
    pub fn breaks(&self) -> bool {
        match &self.kind {
            Kind::Whole { .. } => false,
            Kind::Stream { stream } => stream.breaks(),
        }
    }

    /// Takes the fixed header set out (it is then in the header map).
    pub fn take_fixed_headers(&mut self) -> Option<FixedHeaders> {
        self.fixed.take()
    }
}

impl MockBody {
    /// Appends the body's next bytes to `out` once they are ready: a whole payload at once, a
    /// stream event by event (the own HTTP/1.1 server's path; hyper's takes frames).
    pub fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut Chunks<'_>,
    ) -> Poll<Option<Result<(), crate::answer::sse::ResetOnPurpose>>> {
        match self.project().kind.project() {
            KindProj::Whole { payload } if payload.is_empty() => Poll::Ready(None),
            KindProj::Whole { payload } => {
                payload.copy_out(out.out);
                Poll::Ready(Some(Ok(())))
            }
            KindProj::Stream { stream } => stream.poll_write(cx, out),
        }
    }
}

impl Body for MockBody {
    type Data = Payload;
    type Error = crate::answer::sse::ResetOnPurpose;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Payload>, Self::Error>>> {
        match self.project().kind.project() {
            KindProj::Whole { payload } if payload.is_empty() => Poll::Ready(None),
            KindProj::Whole { payload } => {
                Poll::Ready(Some(Ok(Frame::data(std::mem::take(payload)))))
            }
            KindProj::Stream { stream } => stream.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Whole { payload } => payload.is_empty(),
            Kind::Stream { stream } => stream.is_done(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Whole { payload } => SizeHint::with_exact(payload.len() as u64),
            Kind::Stream { .. } => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every answer is moved several times between the route that builds it and the socket (a
    /// chat completion's `Response<MockBody>` eight times in the own server alone), so its size
    /// is what each move copies. A whole payload (504 bytes on x86_64) sets the floor; a stream
    /// keeps its rare second frame boxed to stay under it (inline, 864 bytes).
    #[test]
    fn a_body_is_no_larger_than_a_whole_payload_and_its_kind() {
        let payload = std::mem::size_of::<crate::catalog::payload::Payload>();
        assert!(std::mem::size_of::<crate::answer::sse::SseStream>() <= payload);
        assert!(std::mem::size_of::<super::MockBody>() <= payload + 32);
    }
}
