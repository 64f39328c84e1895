//! The record's shared words, typed: what a case did ([`Op`]), in which
//! order it touched memory ([`Pattern`]) and which level of the memory
//! hierarchy its working set fell in ([`Regime`]). Each is written in the
//! JSON as the string earlier versions wrote (the names below, exactly), so
//! files round-trip unchanged; a word this version does not know (from a
//! newer or an older writer) reads as `Other` and is written back as it
//! was, so no file fails to read over a word.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One enum of words: each variant's name in the JSON, `Other` for the
/// rest, the string conversions and serde as a plain string.
macro_rules! words {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal $(| $alias:literal)*,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vm])* $v,)*
            /// A word this version does not know, kept as it was written.
            Other(String),
        }

        impl $name {
            /// The word as the JSON spells it.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$v => $s,)*
                    $name::Other(s) => s,
                }
            }

            /// The word of a variant this version knows, for as long as
            /// the program runs (a layer's own closed enum of these words
            /// spells itself through it); `None` for `Other`.
            pub fn word(&self) -> Option<&'static str> {
                match self {
                    $($name::$v => Some($s),)*
                    $name::Other(_) => None,
                }
            }

            /// The variant `s` names; `Other` where none does.
            pub fn parse(s: &str) -> $name {
                match s {
                    $($s $(| $alias)* => $name::$v,)*
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> $name {
                $name::parse(s)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> $name {
                $name::parse(&s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                String::deserialize(d).map($name::from)
            }
        }
    };
}

words! {
    /// What a record's case did (`Record::op`).
    #[derive(Default)]
    Op {
        /// A record whose case never got an op (one skipped before it was
        /// chosen): the empty string.
        #[default]
        Unnamed = "",
        Read = "read",
        Write = "write",
        Copy = "copy",
        /// A dependent chain of loads: time per load, not bytes.
        Latency = "latency",
        /// A NUMA cell or contend agent mixing reads and writes.
        Mix = "mix",
        /// The first touch of fresh pages (the cache suite's `--first-use`).
        FirstUse = "first-use",
        /// Host to device, device to host, on the device, both ways at
        /// once, the host mapping the device's memory; `-sm` is the copy
        /// done by the device's cores instead of its copy engine.
        H2d = "h2d",
        D2h = "d2h",
        D2d = "d2d",
        Bidir = "bidir",
        Map = "map",
        H2dSm = "h2d-sm",
        D2hSm = "d2h-sm",
        D2dSm = "d2d-sm",
        /// One flow of a network test, seen from the leader.
        Send = "send",
        Recv = "recv",
        /// A request/answer network test both ways: the chunk goes out and
        /// comes back (a streaming test's both ways are two flows, `send`
        /// and `recv`).
        Both = "both",
        /// A contend net agent: one flow of bwscope's TCP protocol (the
        /// fleet's `tcp` transport, `model::fleet::Transport`).
        Tcp = "tcp",
        /// A flow of MPI messages (the fleet's `mpi` transport).
        Mpi = "mpi",
        /// A contend phase's agents together.
        Aggregate = "aggregate",
        /// A cache line handed from one core to another (`bwscope
        /// cores`): time per one-way transfer, not bytes.
        CoreToCore = "c2c",
        /// Atomic increments of one line shared by several cores (the
        /// cores suite's fairness view): increments per second.
        Atomic = "atomic",
    }
}

words! {
    /// The order a record's case touched its memory (`Record::pattern`).
    Pattern {
        /// Sequential streams.
        Seq = "seq",
        /// Every line once per pass, in a random order.
        Random = "random",
        /// Sequential within each 4 KiB page, four pages in step (glibc's
        /// large-copy shape).
        Pages = "pages",
        /// A pointer chase.
        Chase = "chase",
        /// A fixed stride (the latency suite's stride view).
        Strided = "strided",
        /// Register (and stack) transfers: no working set.
        Register = "reg",
    }
}

words! {
    /// The level of the memory hierarchy a record's working set fell in
    /// (`Record::regime`), by the host's cache sizes.
    Regime {
        L1 = "L1",
        L2 = "L2",
        L3 = "L3",
        Dram = "DRAM",
    }
}

words! {
    /// What a contend record is (`ContendDetail::agent_kind`): one of the
    /// agent types, the bystander, or a phase's aggregate.
    AgentKind {
        /// A pinned CPU team streaming its own buffers.
        Cpu = "cpu",
        /// A host ↔ device copy stream.
        Device = "device",
        /// A TCP flow.
        Net = "net",
        /// The bystander on a free cpu: a latency chase or a read that
        /// only watches what the agents do to it (written `probe` before
        /// the spell probes kept that word; read as this).
        Bystander = "bystander" | "probe",
        /// A phase's agents together.
        Aggregate = "aggregate",
    }
}

impl AgentKind {
    /// An agent of a phase: not the bystander nor the aggregate (a
    /// kind this version does not know is a newer agent type).
    pub fn is_agent(&self) -> bool {
        !matches!(self, AgentKind::Bystander | AgentKind::Aggregate)
    }
}

impl Regime {
    /// The cache levels then DRAM, in the order headlines list them.
    pub const ALL: [Regime; 4] = [Regime::L1, Regime::L2, Regime::L3, Regime::Dram];

    /// The regime of data cache level `level` (`L4` and beyond as
    /// written: `Other`).
    pub fn cache(level: u8) -> Regime {
        Regime::parse(&format!("L{level}"))
    }

    /// The cache level, `None` for DRAM and for a word that names none.
    pub fn level(&self) -> Option<u8> {
        match self {
            Regime::L1 => Some(1),
            Regime::L2 => Some(2),
            Regime::L3 => Some(3),
            Regime::Dram => None,
            Regime::Other(s) => s.strip_prefix('L')?.parse().ok(),
        }
    }
}

/// Tests compare a regime with the word they expect.
impl PartialEq<&str> for Regime {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_and_write_as_earlier_versions_spelled_them() {
        for (w, s) in [
            (Op::Unnamed, "\"\""),
            (Op::FirstUse, "\"first-use\""),
            (Op::D2dSm, "\"d2d-sm\""),
            (Op::Other("r2w1".into()), "\"r2w1\""),
        ] {
            assert_eq!(serde_json::to_string(&w).unwrap(), s);
            assert_eq!(serde_json::from_str::<Op>(s).unwrap(), w);
        }
        assert_eq!(
            serde_json::to_string(&Pattern::Register).unwrap(),
            "\"reg\""
        );
        let p: Option<Pattern> = serde_json::from_str("\"zigzag\"").unwrap();
        assert_eq!(p, Some(Pattern::Other("zigzag".into())));
        assert_eq!(serde_json::to_string(&Regime::Dram).unwrap(), "\"DRAM\"");
        assert_eq!(
            serde_json::to_string(&AgentKind::Aggregate).unwrap(),
            "\"aggregate\""
        );
        let k: AgentKind = serde_json::from_str("\"fpga\"").unwrap();
        assert!(k == AgentKind::Other("fpga".into()) && k.is_agent());
        assert!(!AgentKind::Bystander.is_agent());
        let r: Option<Regime> = serde_json::from_str("null").unwrap();
        assert_eq!(r, None);
    }

    #[test]
    fn cache_levels_map_both_ways() {
        assert_eq!(Regime::cache(2), Regime::L2);
        assert_eq!(Regime::cache(4), Regime::Other("L4".into()));
        assert_eq!(Regime::cache(4).level(), Some(4));
        assert_eq!(Regime::Dram.level(), None);
        assert_eq!(Regime::parse("HBM").level(), None);
    }
}
