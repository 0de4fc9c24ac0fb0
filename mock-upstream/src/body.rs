//! The one response body type of the mock: empty, a whole payload, or a stream.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use crate::payload::Payload;
use crate::sse::SseStream;

pin_project! {
    /// A response body. A whole payload has an exact size, so hyper sends `content-length`; a
    /// stream is sent chunked.
    #[derive(Debug)]
    pub struct MockBody {
        #[pin]
        kind: Kind,
    }
}

pin_project! {
    #[project = KindProj]
    #[derive(Debug)]
    enum Kind {
        Whole { payload: Option<Payload> },
        Stream { #[pin] stream: SseStream },
    }
}

impl MockBody {
    /// A body of one payload.
    pub fn whole(payload: Payload) -> MockBody {
        let payload = (!payload.is_empty()).then_some(payload);
        MockBody {
            kind: Kind::Whole { payload },
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
        }
    }
}

impl Body for MockBody {
    type Data = Payload;
    type Error = crate::sse::ResetOnPurpose;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Payload>, Self::Error>>> {
        match self.project().kind.project() {
            KindProj::Whole { payload } => Poll::Ready(payload.take().map(|p| Ok(Frame::data(p)))),
            KindProj::Stream { stream } => stream.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Whole { payload } => payload.is_none(),
            Kind::Stream { stream } => stream.is_done(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Whole { payload } => {
                SizeHint::with_exact(payload.as_ref().map_or(0, |p| p.len() as u64))
            }
            Kind::Stream { .. } => SizeHint::default(),
        }
    }
}
