//! What a record says beyond the fields every record has: one typed
//! detail per suite, with named, documented, unit-bearing fields.
//!
//! In the JSON a record names its suite (`"suite": "latency"`) and keeps
//! the suite's own fields under `"extra"`: [`Detail`] is that pair, read
//! and written as one (the suite picks the type `extra` is read as), and
//! `extra` is left out when a record states nothing of its suite (a
//! skipped case). Each suite's fields are documented on its type and in
//! `docs/schema.md`, which a test checks against these types.
//!
//! Adding a suite: one row in the `each_suite!` list below (its
//! module, [`SuiteId`] variant, detail type and name). The row declares
//! the detail's module here, the suite's module in `suites` and its view's
//! in `report::views`; the compiler then asks for the three files and
//! every `match` on [`SuiteId`] in the crate says what else is missing.

mod nullable;

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::headline::Quantity;
use super::{Record, Stats};

pub use cache::{Bandwidth, FirstUse};
pub use cores::{CoresView, Exchange};
pub use latency::{Pages, View};
pub use memtype::BreakEven;
pub use net::PeerView;
pub use nullable::Nullable;
pub use transfer::Timer;

/// What every suite's detail can say about itself for whoever reads
/// records without knowing the suite (compare, charts, summaries).
pub trait SuiteDetail: Serialize + for<'de> Deserialize<'de> + Default + Clone {
    /// The parts of the case identity beyond kernel, size, threads and
    /// memory kind (the `case_*` keys of the JSON), sorted by name.
    fn case(&self) -> Vec<CasePart> {
        Vec::new()
    }

    /// The record's figure when it has no bandwidth (`gbps` null).
    fn metric(&self) -> Option<RecordMetric> {
        None
    }

    /// The clock and L1 ceiling a bandwidth record was checked against.
    fn bandwidth(&self) -> Option<&Bandwidth> {
        None
    }

    /// The figures a fleet judges across its nodes from this suite's
    /// records of one run (`records`: those that ran, in order), each with
    /// the record it was read from. A suite declares here what of it a
    /// fleet compares; the headline figures every run gives (one core's
    /// cache and DRAM bandwidth, all cores' DRAM read, DRAM latency) are
    /// `report::fleet::metrics`'s own, read as the summary line reads them.
    fn judged<'a>(_records: &[&'a Record]) -> Vec<Judged<'a>>
    where
        Self: Sized,
    {
        Vec::new()
    }
}

/// A figure a fleet judges across its nodes (see [`SuiteDetail::judged`]).
#[derive(Debug, Clone)]
pub struct Judged<'a> {
    /// The metric's name (`memtype_thp_copy_gbps`): letters, digits and
    /// `_` only.
    pub metric: String,
    pub quantity: Quantity,
    pub higher_is_better: bool,
    /// The metric family it belongs to, without prefix or unit
    /// (`memtype_copy`), and its dimensions there (`kind`): the metrics
    /// files write one family per quantity, its dimensions as labels.
    pub family: String,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
    /// One line on what it is, for HELP texts and tables.
    pub what: String,
    /// The record it was read from (its noise, its repeats).
    pub record: &'a Record,
}

/// `text` as part of a metric name: lower case, anything but a letter or
/// a digit as `_` (`hugetlb-2M` → `hugetlb_2m`).
pub fn metric_part(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A suite's detail type and the [`Detail`] variant that holds it
/// (implemented by `suites!`, from the `each_suite!` list, for every suite).
pub trait OfSuite: SuiteDetail + Into<Detail> {
    /// Which suite's records carry it.
    const SUITE: SuiteId;

    /// This suite's detail in `d`, if `d` is of this suite.
    fn of(d: &Detail) -> Option<&Self>;

    /// The same, to change it.
    fn of_mut(d: &mut Detail) -> Option<&mut Self>;
}

/// One part of a record's case identity: the JSON key `case_<name>` and
/// its value. `compare` lines records up by these, charts name series by
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct CasePart {
    pub name: &'static str,
    pub value: Value,
}

impl CasePart {
    /// The part for a stated value; None where the record leaves it out.
    pub fn of<T: Serialize>(name: &'static str, v: Option<&T>) -> Option<CasePart> {
        v.map(|v| CasePart {
            name,
            value: serde_json::to_value(v).unwrap_or(Value::Null),
        })
    }

    /// The part for a [`Nullable`] (null is a value of the key too).
    pub fn nullable<T: Serialize>(name: &'static str, v: &Nullable<T>) -> Option<CasePart> {
        match v {
            Nullable::Absent => None,
            Nullable::Null => Some(CasePart {
                name,
                value: Value::Null,
            }),
            Nullable::Value(v) => CasePart::of(name, Some(v)),
        }
    }

    /// The value as a person reads it: strings without quotes.
    pub fn shown(&self) -> String {
        match &self.value {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        }
    }
}

/// The parts that are stated, sorted by name.
fn case_parts(parts: impl IntoIterator<Item = Option<CasePart>>) -> Vec<CasePart> {
    let mut v: Vec<CasePart> = parts.into_iter().flatten().collect();
    v.sort_by_key(|p| p.name);
    v
}

/// A figure other than bandwidth that a record is judged by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordMetric {
    pub stats: Stats,
    pub unit: &'static str,
    pub higher_is_better: bool,
}

/// Declares the suites from `each_suite!`: each one's detail module,
/// [`SuiteId`] variant, detail type and name in the JSON; generates the
/// enums and the conversions.
macro_rules! suites {
    ($( $(#[$doc:meta])* $module:ident: $id:ident($detail:ident) = $name:literal, )*) => {
        $(
            mod $module;
            pub use $module::$detail;
        )*

        /// A suite: what `Record::suite` names. The order is the order
        /// suites are listed in (and the survey runs its share of them in).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum SuiteId {
            $( $(#[$doc])* #[serde(rename = $name)] $id, )*
        }

        impl SuiteId {
            /// Every suite, in order.
            pub const ALL: &'static [SuiteId] = &[$(SuiteId::$id),*];

            /// The name in records, options and on the command line.
            pub fn name(self) -> &'static str {
                match self {
                    $( SuiteId::$id => $name, )*
                }
            }

            /// What a fleet judges of this suite's `records` (see
            /// [`SuiteDetail::judged`]).
            pub fn judged<'a>(self, records: &[&'a Record]) -> Vec<Judged<'a>> {
                match self {
                    $( SuiteId::$id => <$detail as SuiteDetail>::judged(records), )*
                }
            }
        }

        /// A record's suite and what it says beyond the common fields: the
        /// JSON's `suite` and `extra` together.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Detail {
            $( $id($detail), )*
        }

        impl Detail {
            /// The suite the record belongs to.
            pub fn suite(&self) -> SuiteId {
                match self {
                    $( Detail::$id(_) => SuiteId::$id, )*
                }
            }

            /// A record of `suite` that states nothing of it (a skipped
            /// case, an error).
            pub fn empty(suite: SuiteId) -> Detail {
                match suite {
                    $( SuiteId::$id => Detail::$id($detail::default()), )*
                }
            }

            /// See [`SuiteDetail::case`].
            pub fn case(&self) -> Vec<CasePart> {
                match self {
                    $( Detail::$id(d) => d.case(), )*
                }
            }

            /// See [`SuiteDetail::metric`].
            pub fn metric(&self) -> Option<RecordMetric> {
                match self {
                    $( Detail::$id(d) => d.metric(), )*
                }
            }

            /// See [`SuiteDetail::bandwidth`].
            pub fn bandwidth(&self) -> Option<&Bandwidth> {
                match self {
                    $( Detail::$id(d) => d.bandwidth(), )*
                }
            }

            /// The suite's own fields as the JSON object under `extra`
            /// (empty when the record states none of them).
            pub fn fields(&self) -> Map<String, Value> {
                let v = match self {
                    $( Detail::$id(d) => serde_json::to_value(d), )*
                };
                match v {
                    Ok(Value::Object(m)) => m,
                    _ => Map::new(),
                }
            }

            /// The detail of a `suite` record from its `extra` object.
            fn from_extra(suite: SuiteId, extra: Value) -> Result<Detail, serde_json::Error> {
                match suite {
                    $( SuiteId::$id => serde_json::from_value(extra).map(Detail::$id), )*
                }
            }
        }

        $(
            impl From<$detail> for Detail {
                fn from(d: $detail) -> Detail {
                    Detail::$id(d)
                }
            }

            impl OfSuite for $detail {
                const SUITE: SuiteId = SuiteId::$id;

                fn of(d: &Detail) -> Option<&$detail> {
                    match d {
                        Detail::$id(x) => Some(x),
                        _ => None,
                    }
                }

                fn of_mut(d: &mut Detail) -> Option<&mut $detail> {
                    match d {
                        Detail::$id(x) => Some(x),
                        _ => None,
                    }
                }
            }
        )*
    };
}

/// The suites, one row each: the module of its detail (here), of its
/// plan (`suites::<module>`) and of its view (`report::views::<module>`);
/// its [`SuiteId`] variant; its detail type; its name in records, options
/// and on the command line. The order is the order suites are listed and
/// run in. `each_suite!(then)` calls the macro `then` with the rows:
/// `suites!` here, and the module declarations and registries of
/// `suites` and `report::views`, so the one row registers a suite in all
/// three.
macro_rules! each_suite {
    ($then:ident) => {
        $then! {
            /// The cache → DRAM sweep (`bwscope cache`), with `--first-use`.
            cache: Cache(CacheDetail) = "cache",
            /// Load-to-use latency by pointer chase (`bwscope latency`).
            latency: Latency(LatencyDetail) = "latency",
            /// Register and stack transfers (`bwscope regs`).
            regs: Regs(RegsDetail) = "regs",
            /// A cache line handed from core to core (`bwscope cores`).
            cores: Cores(CoresDetail) = "cores",
            /// Thread scaling (`bwscope threads`).
            threads: Threads(ThreadsDetail) = "threads",
            /// Cpu node × memory node (`bwscope numa`).
            numa: Numa(NumaDetail) = "numa",
            /// Memory kinds (`bwscope memtype`).
            memtype: Memtype(MemtypeDetail) = "memtype",
            /// Host ↔ accelerator copies (`bwscope transfer`).
            transfer: Transfer(TransferDetail) = "transfer",
            /// TCP between a leader and a transponder (`bwscope net run`).
            net: Net(NetDetail) = "net",
            /// Many agents sharing one memory system at once (`bwscope contend`).
            contend: Contend(ContendDetail) = "contend",
        }
    };
}
pub(crate) use each_suite;

each_suite!(suites);

impl SuiteId {
    /// The suite called `name`.
    pub fn parse(name: &str) -> Option<SuiteId> {
        SuiteId::ALL.iter().copied().find(|s| s.name() == name)
    }
}

impl std::fmt::Display for SuiteId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An empty detail of `suite`.
impl From<SuiteId> for Detail {
    fn from(suite: SuiteId) -> Detail {
        Detail::empty(suite)
    }
}

impl Detail {
    /// The detail as `T`, when the record is of `T`'s suite.
    pub fn get<T: OfSuite>(&self) -> Option<&T> {
        T::of(self)
    }

    /// The same, to change it.
    pub fn get_mut<T: OfSuite>(&mut self) -> Option<&mut T> {
        T::of_mut(self)
    }

    /// The record's latency, where it has one (ns per load, lower is
    /// better).
    pub fn latency_ns(&self) -> Option<&Stats> {
        match self {
            Detail::Latency(d) => d.latency_ns.get(),
            Detail::Numa(d) => d.latency_ns.get(),
            Detail::Contend(d) => d.latency_ns.get(),
            _ => None,
        }
    }
}

/// Written as `"suite": name` and, when anything is stated,
/// `"extra": {…}` (flattened into the record).
impl Serialize for Detail {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let extra = self.fields();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("suite", &self.suite())?;
        if !extra.is_empty() {
            m.serialize_entry("extra", &extra)?;
        }
        m.end().map_err(|e| S::Error::custom(e.to_string()))
    }
}

/// Read from `"suite"` and `"extra"` (absent: nothing stated); a suite this
/// bwscope does not know is an error naming it.
impl<'de> Deserialize<'de> for Detail {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Detail, D::Error> {
        #[derive(Deserialize)]
        struct Tagged {
            suite: String,
            #[serde(default)]
            extra: Option<Value>,
        }
        let t = Tagged::deserialize(d)?;
        let suite = SuiteId::parse(&t.suite).ok_or_else(|| {
            let known: Vec<&str> = SuiteId::ALL.iter().map(|s| s.name()).collect();
            D::Error::custom(format!(
                "a record of suite '{}', which this bwscope does not know ({}); upgrade bwscope",
                t.suite,
                known.join(", ")
            ))
        })?;
        let extra = t.extra.unwrap_or_else(|| Value::Object(Map::new()));
        Detail::from_extra(suite, extra)
            .map_err(|e| D::Error::custom(format!("extra of a {suite} record: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for &s in SuiteId::ALL {
            assert_eq!(SuiteId::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(Detail::empty(s).suite(), s);
        }
        assert_eq!(SuiteId::parse("stream"), None);
    }

    #[test]
    fn an_empty_detail_writes_no_extra_and_reads_back() {
        let v = serde_json::to_value(Detail::empty(SuiteId::Numa)).unwrap();
        assert_eq!(v, serde_json::json!({"suite": "numa"}));
        let d: Detail = serde_json::from_value(v).unwrap();
        assert_eq!(d, Detail::empty(SuiteId::Numa));
    }

    #[test]
    fn unknown_suites_and_mistyped_fields_are_named() {
        let e = serde_json::from_value::<Detail>(serde_json::json!({"suite": "stream"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'stream'") && e.contains("cache"), "{e}");
        let e = serde_json::from_value::<Detail>(
            serde_json::json!({"suite": "latency", "extra": {"hops_per_sample": "many"}}),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("extra of a latency record"), "{e}");
    }
}
