//! A conversation's messages, and the first of them changed since the body's pieces were last
//! told: a new message is only added, and only an API that joins a message to the last one
//! (its turns alternate) changes one already written, so only then is it written again.

use std::ops::Deref;

use serde_json::Value;

/// A conversation's messages in the API's shape.
#[derive(Debug, Clone, Default)]
pub(super) struct History {
    messages: Vec<Value>,
    /// The first message changed since [`History::changed_from`] was last called.
    changed: usize,
}

impl History {
    /// Adds `message` after the others.
    pub(super) fn push(&mut self, message: Value) {
        self.messages.push(message);
    }

    /// The last message, to change it: it is written again.
    pub(super) fn last_mut(&mut self) -> Option<&mut Value> {
        self.changed_from_here(self.messages.len().saturating_sub(1));
        self.messages.last_mut()
    }

    /// The first message, to change it: it is written again.
    pub(super) fn first_mut(&mut self) -> Option<&mut Value> {
        self.changed_from_here(0);
        self.messages.first_mut()
    }

    /// The first message changed since the last call (the number of messages then, when none
    /// was), and from now on none.
    pub(super) fn changed_from(&mut self) -> usize {
        std::mem::replace(&mut self.changed, self.messages.len())
    }

    fn changed_from_here(&mut self, at: usize) {
        self.changed = self.changed.min(at);
    }

    /// The messages, to mark the last of them for a body and unmark it after.
    pub(super) fn as_mut_slice(&mut self) -> &mut [Value] {
        &mut self.messages
    }
}

impl Deref for History {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        &self.messages
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_a_message_changed_in_place_is_told() {
        let mut h = History::default();
        h.push(json!(1));
        h.push(json!(2));
        assert_eq!(h.changed_from(), 0, "nothing was written yet");
        h.push(json!(3));
        assert_eq!(h.changed_from(), 2, "none changed: from the new ones");
        *h.last_mut().unwrap() = json!(4);
        h.push(json!(5));
        assert_eq!(h.changed_from(), 2, "the last one changed");
        h.first_mut();
        assert_eq!(h.changed_from(), 0);
        assert_eq!(h.changed_from(), 4);
        assert_eq!(&h[..], &[json!(1), json!(2), json!(4), json!(5)]);
    }
}
