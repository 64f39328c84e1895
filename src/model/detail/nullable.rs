//! [`Nullable`]: the three states a JSON key can be in.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A figure a kind of record always states, `null` when it is unknown
/// (`"ceiling_gbps": null` on a core the microarchitecture table lacks),
/// and that records of other kinds (a skipped case) and files written
/// before it existed do not carry at all. Keeping absent apart from
/// `null` makes a run read and written again the same file.
///
/// A field of this type goes with
/// `#[serde(default, skip_serializing_if = "Nullable::is_absent")]`.
/// Fields a record either carries or leaves out are plain `Option`s.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Nullable<T> {
    /// Not in the record.
    #[default]
    Absent,
    /// In the record as `null`: unknown.
    Null,
    /// In the record with a value.
    Value(T),
}

impl<T> Nullable<T> {
    /// The value, if the record states one.
    pub fn get(&self) -> Option<&T> {
        match self {
            Nullable::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_absent(&self) -> bool {
        matches!(self, Nullable::Absent)
    }
}

impl<T: Copy> Nullable<T> {
    /// The value, if the record states one (by copy).
    pub fn value(&self) -> Option<T> {
        self.get().copied()
    }
}

/// A stated figure: `None` is `null`.
impl<T> From<Option<T>> for Nullable<T> {
    fn from(v: Option<T>) -> Nullable<T> {
        match v {
            Some(v) => Nullable::Value(v),
            None => Nullable::Null,
        }
    }
}

impl<T: Serialize> Serialize for Nullable<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Nullable::Value(v) => s.serialize_some(v),
            // Absent is skipped by the field's attribute; alone it is null.
            Nullable::Absent | Nullable::Null => s.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Nullable<T>, D::Error> {
        Option::<T>::deserialize(d).map(Nullable::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, Default, Debug, PartialEq)]
    struct T {
        #[serde(default, skip_serializing_if = "Nullable::is_absent")]
        x: Nullable<f64>,
    }

    #[test]
    fn absent_null_and_value_round_trip() {
        for text in [r#"{}"#, r#"{"x":null}"#, r#"{"x":1.5}"#] {
            let t: T = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&t).unwrap(), text);
        }
        let t: T = serde_json::from_str(r#"{"x":2.0}"#).unwrap();
        assert_eq!(t.x.value(), Some(2.0));
        assert_eq!(Nullable::from(None::<f64>), Nullable::Null);
    }
}
