//! Classes of cpu pairs: what two cpus share, as the system states it
//! (`model::Topology`). Two cpus on one core are SMT siblings; else they
//! may share an L2 (Intel's E-core modules, Arm clusters), a cluster, a
//! last-level cache (a Zen CCX, an Intel socket's mesh), a die, a NUMA
//! node or a package; or nothing but the machine. The nearest level they
//! share names the class, with the nodes' distance for pairs across nodes
//! and the two kinds of core where kinds differ (a big and a LITTLE core
//! are not a big pair). The core-to-core planner measures a few pairs of
//! each class; the suite holds what they measure against the class.

use serde::{Deserialize, Serialize};

use crate::model::{CpuPlace, Topology};

/// The nearest thing two cpus share, nearest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Near {
    /// One core: SMT siblings.
    Smt,
    /// One L2, on separate cores.
    L2,
    /// One cluster (`cluster_id`) without a shared L2.
    Cluster,
    /// One last-level cache (a CCX, a socket's L3).
    L3,
    /// One die, separate last-level caches.
    Die,
    /// One NUMA node, separate dies or caches.
    Node,
    /// One package, separate nodes.
    Package,
    /// Separate packages.
    Socket,
}

impl Near {
    pub fn name(self) -> &'static str {
        match self {
            Near::Smt => "smt",
            Near::L2 => "l2",
            Near::Cluster => "cluster",
            Near::L3 => "l3",
            Near::Die => "die",
            Near::Node => "node",
            Near::Package => "package",
            Near::Socket => "socket",
        }
    }

    /// What the pair shares, in words.
    pub fn what(self) -> &'static str {
        match self {
            Near::Smt => "SMT siblings: one core",
            Near::L2 => "separate cores sharing an L2",
            Near::Cluster => "separate cores of one cluster",
            Near::L3 => "separate cores sharing the last-level cache",
            Near::Die => "one die, separate last-level caches",
            Near::Node => "one NUMA node, separate dies or caches",
            Near::Package => "one package, separate NUMA nodes",
            Near::Socket => "separate packages",
        }
    }

    /// A one-way transfer this class typically takes, ns: the upper end
    /// of what nviennot/core-to-core-latency's published tables show for
    /// it (its README: SMT siblings 4–10 ns, one CCX or ring 16–50,
    /// across CCXs 85–160, across sockets 108–197), for planning time
    /// only — never a measurement, never a verdict.
    pub fn typical_ns(self) -> f64 {
        match self {
            Near::Smt => 10.0,
            Near::L2 | Near::Cluster => 30.0,
            Near::L3 => 50.0,
            Near::Die | Near::Node => 160.0,
            Near::Package | Near::Socket => 200.0,
        }
    }
}

/// A class of pairs: the nearest level shared, the nodes' distance for a
/// pair across nodes, the two kinds of core (sorted) where kinds differ.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClassKey {
    pub near: Near,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<(String, String)>,
}

impl ClassKey {
    /// Its name: the level (`l3`), then ` d<distance>` and the kinds
    /// where stated (`socket d32`, `l3 0x41-0xd85+0x41-0xd87`).
    pub fn name(&self) -> String {
        let mut s = self.near.name().to_string();
        if let Some(d) = self.distance {
            s.push_str(&format!(" d{d}"));
        }
        if let Some((a, b)) = &self.kinds {
            s.push_str(&format!(" {a}+{b}"));
        }
        s
    }
}

/// Whether two sorted cpu lists name the same group (and are stated).
fn same(a: &[u32], b: &[u32]) -> bool {
    !a.is_empty() && a == b
}

/// The class of the pair `a`, `b` (two places of `t`).
pub fn class_of(t: &Topology, a: &CpuPlace, b: &CpuPlace) -> ClassKey {
    let near = if a.core_cpus.contains(&b.cpu) {
        Near::Smt
    } else if a.l2.contains(&b.cpu) && same(&a.l2, &b.l2) {
        Near::L2
    } else if a.cluster.is_some() && a.cluster == b.cluster && a.package == b.package {
        Near::Cluster
    } else if a.l3.contains(&b.cpu) && same(&a.l3, &b.l3) {
        Near::L3
    } else if a.package == b.package && a.die.is_some() && a.die == b.die && a.node == b.node {
        Near::Die
    } else if a.node == b.node && a.package == b.package {
        Near::Node
    } else if a.package == b.package {
        Near::Package
    } else {
        Near::Socket
    };
    let distance = match (near, a.node, b.node) {
        (Near::Package | Near::Socket, Some(x), Some(y)) if x != y => t.distance(x, y),
        _ => None,
    };
    let kinds = match (&a.kind, &b.kind) {
        (Some(x), Some(y)) => Some(if x <= y {
            (x.clone(), y.clone())
        } else {
            (y.clone(), x.clone())
        }),
        _ => None,
    };
    ClassKey {
        near,
        distance,
        kinds,
    }
}

/// Every class among `cpus` (each a cpu of `t`), nearest first, with its
/// pairs (a < b) in cpu order. A cpu `t` does not know is left out.
pub fn classes(t: &Topology, cpus: &[u32]) -> Vec<(ClassKey, Vec<(u32, u32)>)> {
    let places: Vec<&CpuPlace> = cpus.iter().filter_map(|&c| t.place(c)).collect();
    let mut out: std::collections::BTreeMap<ClassKey, Vec<(u32, u32)>> = Default::default();
    for (i, a) in places.iter().enumerate() {
        for b in &places[i + 1..] {
            let (a, b) = if a.cpu < b.cpu { (a, b) } else { (b, a) };
            out.entry(class_of(t, a, b))
                .or_default()
                .push((a.cpu, b.cpu));
        }
    }
    out.into_iter().collect()
}

/// Each cpu's partners by class: for cpu `c` and class index `k` (into
/// the list [`classes`] gave), the cpus that pair with `c` in class `k`.
pub fn partners(classes: &[(ClassKey, Vec<(u32, u32)>)], c: u32) -> Vec<Vec<u32>> {
    classes
        .iter()
        .map(|(_, pairs)| {
            pairs
                .iter()
                .filter_map(|&(a, b)| match (a == c, b == c) {
                    (true, _) => Some(b),
                    (_, true) => Some(a),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::parse::topology::tests::fixture;

    fn names(t: &Topology) -> Vec<(String, usize)> {
        let all: Vec<u32> = t.cpus.iter().map(|p| p.cpu).collect();
        classes(t, &all)
            .into_iter()
            .map(|(k, p)| (k.name(), p.len()))
            .collect()
    }

    fn n(s: &str, c: usize) -> (String, usize) {
        (s.to_string(), c)
    }

    #[test]
    fn two_socket_intel_server() {
        // 2 × 8 cores × 2 threads: 16 SMT pairs; per socket 16 cpus on one
        // L3, C(16,2) − 8 sibling pairs = 112; across: 16 × 16.
        let t = fixture("32intel64-2p8co2t+8ve");
        assert_eq!(
            names(&t),
            vec![n("smt", 16), n("l3", 2 * 112), n("socket d21", 256)]
        );
    }

    #[test]
    fn zen4_server_with_eight_core_ccds() {
        let t = fixture("generated-2x-epyc-9654");
        let got = names(&t);
        let total: usize = got.iter().map(|(_, c)| c).sum();
        assert_eq!(total, 384 * 383 / 2);
        // 192 cores' sibling pairs; per CCD C(16,2) − 8 = 112, 24 CCDs;
        // across CCDs of one socket: the rest of each socket's pairs.
        assert_eq!(got[0], n("smt", 192));
        assert_eq!(got[1], n("l3", 24 * 112));
        assert_eq!(got[2], n("node", 2 * (192 * 191 / 2 - 12 * 120)));
        assert_eq!(got[3], n("socket d32", 192 * 192));
    }

    #[test]
    fn big_little_board_classes_carry_their_kinds() {
        let t = fixture("nvidia-dgx-gb10");
        let got: Vec<String> = names(&t).into_iter().map(|(s, _)| s).collect();
        // Two clusters of 5 X925 (0xd85) + 5 A725 (0xd87), one L3 each;
        // cluster_id is the L3 group here, so the nearest is `cluster`.
        assert_eq!(
            got,
            vec![
                "cluster 0x41-0xd85+0x41-0xd85",
                "cluster 0x41-0xd85+0x41-0xd87",
                "cluster 0x41-0xd87+0x41-0xd87",
                "node 0x41-0xd85+0x41-0xd85",
                "node 0x41-0xd85+0x41-0xd87",
                "node 0x41-0xd87+0x41-0xd87",
            ]
        );
    }

    #[test]
    fn arm_server_clusters_nodes_and_distances() {
        let t = fixture("128arm-2pa2n8cluster4co");
        let got: Vec<String> = names(&t).into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            got,
            vec![
                "cluster",
                "l3",
                "package d16",
                "socket d25",
                "socket d32",
                "socket d33"
            ]
        );
    }

    #[test]
    fn hybrid_e_cores_share_an_l2() {
        let t = fixture("20em64t-hybrid-1p6c2t+2ca4co1t");
        let got = names(&t);
        // 6 P-cores × 2 threads (6 sibling pairs), 2 modules of 4 E-cores.
        assert_eq!(got[0], n("smt", 6));
        assert_eq!(got[1], n("l2", 2 * 6));
        assert_eq!(got[2].0, "l3");
    }

    #[test]
    fn this_guest_has_one_pair_on_one_l3() {
        let t = fixture("guest-emr-2vcpu");
        assert_eq!(names(&t), vec![n("l3", 1)]);
    }

    #[test]
    fn the_576_cpu_server() {
        let t = fixture("generated-576-aarch64");
        let got: Vec<String> = names(&t).into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            got,
            vec![
                "smt",
                "cluster",
                "l3",
                "package d16",
                "socket d32",
                "socket d34"
            ]
        );
    }
}
