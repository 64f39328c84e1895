//! Which suite a record comes from ([`SuiteId`]).

use serde::{Deserialize, Serialize};

/// A suite: what `Record::suite` names. The order is the order suites are
/// listed in (and the survey runs its share of them in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuiteId {
    Cache,
    Latency,
    Regs,
    Threads,
    Numa,
    Memtype,
    Transfer,
    Net,
}

impl SuiteId {
    /// Every suite, in order.
    pub const ALL: [SuiteId; 8] = [
        SuiteId::Cache,
        SuiteId::Latency,
        SuiteId::Regs,
        SuiteId::Threads,
        SuiteId::Numa,
        SuiteId::Memtype,
        SuiteId::Transfer,
        SuiteId::Net,
    ];

    /// The name in records, options and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SuiteId::Cache => "cache",
            SuiteId::Latency => "latency",
            SuiteId::Regs => "regs",
            SuiteId::Threads => "threads",
            SuiteId::Numa => "numa",
            SuiteId::Memtype => "memtype",
            SuiteId::Transfer => "transfer",
            SuiteId::Net => "net",
        }
    }

    /// The suite called `name`.
    pub fn parse(name: &str) -> Option<SuiteId> {
        SuiteId::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl std::fmt::Display for SuiteId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for s in SuiteId::ALL {
            assert_eq!(SuiteId::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        assert_eq!(SuiteId::parse("stream"), None);
    }
}
