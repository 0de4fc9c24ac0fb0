//! Folded stacks (`root;caller;…;leaf` with a weight), as the CPU and the memory profiles
//! record them: samples, microseconds or bytes.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Stacks, root first, with their weight: samples on-CPU, microseconds off-CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Folded(pub BTreeMap<String, u64>);
