//! A target's role in a comparison: the direct upstream, the twin (the A/A control: the same
//! upstream again, or `--twin URL`), or a gateway under its own name. In a result file a role is
//! written as the target's name (`direct`, `twin`, or the gateway's), and read back the same way:
//! [`Role::from_name`] is the one place a name becomes a role.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a target is to a comparison, and the name it is reported under.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The upstream called without a gateway (`--direct`).
    Direct,
    /// The A/A control (`--twin`): what an identical path measures as "added".
    Twin,
    /// A gateway (`--gateway NAME=URL`), by its name (never `direct` or `twin`).
    Gateway(String),
}

impl Role {
    /// The name the direct target is reported under.
    pub const DIRECT: &'static str = "direct";
    /// The name the twin is reported under.
    pub const TWIN: &'static str = "twin";

    /// The role a reported name stands for: `direct`, `twin`, else a gateway's.
    pub fn from_name(name: &str) -> Role {
        match name {
            Role::DIRECT => Role::Direct,
            Role::TWIN => Role::Twin,
            name => Role::Gateway(name.to_string()),
        }
    }

    /// The name the target is reported under.
    pub fn as_str(&self) -> &str {
        match self {
            Role::Direct => Role::DIRECT,
            Role::Twin => Role::TWIN,
            Role::Gateway(name) => name,
        }
    }

    pub fn is_direct(&self) -> bool {
        matches!(self, Role::Direct)
    }

    pub fn is_twin(&self) -> bool {
        matches!(self, Role::Twin)
    }

    /// A gateway's, not the direct target's or the twin's.
    pub fn is_gateway(&self) -> bool {
        matches!(self, Role::Gateway(_))
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Role, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Role::from_name(&name))
    }
}

/// Compares the name a target is reported under (a gateway found by the name the user gave).
impl PartialEq<&str> for Role {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

impl From<&str> for Role {
    fn from(name: &str) -> Role {
        Role::from_name(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_is_written_and_read_back_as_its_name() {
        for (role, name) in [
            (Role::Direct, "\"direct\""),
            (Role::Twin, "\"twin\""),
            (Role::Gateway("nginx".into()), "\"nginx\""),
        ] {
            assert_eq!(serde_json::to_string(&role).unwrap(), name);
            assert_eq!(serde_json::from_str::<Role>(name).unwrap(), role);
        }
        assert_eq!(format!("{:>7}", Role::Twin), "   twin");
    }
}
