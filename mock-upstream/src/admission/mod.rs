//! Admission: what a request passes before it is answered: its route, its receipt, auth, faults
//! and latency overrides, and a refusal in every provider's shape.

pub(crate) mod auth;
pub(crate) mod error_body;
pub(crate) mod faults;
pub(crate) mod inbound;
pub(crate) mod rejection;
pub(crate) mod request;
pub(crate) mod router;
