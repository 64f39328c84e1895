//! Tier facts from file trees. The layouts are CONSTRUCTED from public
//! descriptions of the machines' node layouts (not captured from them):
//! Xeon Max 9480 in flat mode with SNC4 (Intel's "Xeon CPU Max Series
//! Configuration and Tuning Guide": four DDR5 nodes with the cores, four
//! cpu-less HBM nodes of 16 GiB), Grace Hopper GH200 (NVIDIA's "Grace
//! Hopper Superchip Architecture" whitepaper: the Grace cpus and LPDDR5X
//! on node 0, the GPU's 96 GB HBM3 onlined as cpu-less node 1, nodes 2-8
//! without memory, for MIG partitions) and a QEMU-like CXL expander as the
//! kernel's CXL documentation describes its sysfs.

use std::collections::BTreeMap;

use super::*;

#[derive(Default)]
pub(crate) struct MapTree {
    files: BTreeMap<String, String>,
    links: BTreeMap<String, String>,
}

impl MapTree {
    pub(crate) fn file(&mut self, p: &str, text: &str) -> &mut Self {
        self.files.insert(p.into(), text.into());
        self
    }
    pub(crate) fn symlink(&mut self, p: &str, to: &str) -> &mut Self {
        self.links.insert(p.into(), to.into());
        self
    }
    /// A node with cpus and memory (GiB).
    pub(crate) fn node(&mut self, id: u32, cpus: &str, gib: u64) -> &mut Self {
        let d = format!("{NODE}/node{id}");
        self.file(&format!("{d}/cpulist"), &format!("{cpus}\n"));
        self.file(
            &format!("{d}/meminfo"),
            &format!(
                "Node {id} MemTotal:       {} kB\nNode {id} MemFree: 1 kB\n",
                gib << 20
            ),
        )
    }
    /// An HMAT access class of `target` for `initiators`: bandwidths MB/s,
    /// latencies ns.
    pub(crate) fn hmat(
        &mut self,
        target: u32,
        access: u8,
        initiators: &[u32],
        rw_bw: (u64, u64),
        rw_lat: (u64, u64),
    ) -> &mut Self {
        let d = format!("{NODE}/node{target}/access{access}/initiators");
        for i in initiators {
            self.symlink(&format!("{d}/node{i}"), &format!("../../../node{i}"));
        }
        self.file(&format!("{d}/read_bandwidth"), &format!("{}\n", rw_bw.0));
        self.file(&format!("{d}/write_bandwidth"), &format!("{}\n", rw_bw.1));
        self.file(&format!("{d}/read_latency"), &format!("{}\n", rw_lat.0));
        self.file(&format!("{d}/write_latency"), &format!("{}\n", rw_lat.1))
    }
    pub(crate) fn tier(&mut self, id: u32, nodes: &str) -> &mut Self {
        self.file(
            &format!("sys/devices/virtual/memory_tiering/memory_tier{id}/nodelist"),
            &format!("{nodes}\n"),
        )
    }
}

impl Tree for MapTree {
    fn read(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }
    fn list(&self, path: &str) -> Vec<String> {
        let prefix = format!("{path}/");
        let mut v: Vec<String> = self
            .files
            .keys()
            .chain(self.links.keys())
            .filter_map(|k| k.strip_prefix(&prefix))
            .map(|rest| rest.split('/').next().unwrap_or(rest).to_string())
            .collect();
        v.sort();
        v.dedup();
        v
    }
    fn link(&self, path: &str) -> Option<String> {
        self.links.get(path).cloned()
    }
}

pub(crate) fn xeon_max_flat_snc4() -> MapTree {
    let mut t = MapTree::default();
    t.file(&format!("{NODE}/online"), "0-7\n");
    for i in 0..4u32 {
        t.node(i, &format!("{}-{}", i * 14, i * 14 + 13), 32);
        // Every node's own quadrant: DDR5 ~ 60 GB/s, HBM ~ 200 GB/s.
        t.hmat(i, 0, &[i], (60_000, 60_000), (110, 110));
        t.hmat(i, 1, &[i], (60_000, 60_000), (110, 110));
        t.node(i + 4, "", 16);
        t.hmat(i + 4, 0, &[i], (200_000, 180_000), (130, 130));
        t.hmat(i + 4, 1, &[i], (200_000, 180_000), (130, 130));
    }
    t.tier(4, "0-7");
    t
}

pub(crate) fn grace_hopper() -> MapTree {
    let mut t = MapTree::default();
    t.file(&format!("{NODE}/online"), "0-8\n");
    t.node(0, "0-71", 480);
    t.node(1, "", 96);
    for i in 2..=8 {
        t.node(i, "", 0);
    }
    t.tier(4, "0-1");
    t.file(
        "proc/driver/nvidia/gpus/0009:01:00.0/numa_status",
        "Node: 1\nStatus: online\n",
    );
    t
}

/// Two DRAM nodes with cpus and a CXL Type-3 expander onlined by kmem on
/// cpu-less node 2, in a lower tier (kernel 6.7+ places it there from its
/// HMAT/CDAT distance); the weighted-interleave weights at their default.
pub(crate) fn cxl_expander() -> MapTree {
    let mut t = MapTree::default();
    t.file(&format!("{NODE}/online"), "0-2\n");
    t.node(0, "0-7", 64).node(1, "8-15", 64).node(2, "", 128);
    t.hmat(2, 0, &[0, 1], (30_000, 0), (250, 0));
    t.tier(4, "0-1").tier(22, "2");
    t.file("sys/bus/cxl/devices/region0/size", "0x2000000000\n");
    t.file("sys/bus/cxl/devices/mem0/serial", "0\n");
    t.file("sys/bus/dax/devices/dax0.0/target_node", "2\n");
    t.symlink(
        "sys/bus/dax/devices/dax0.0",
        "../../../devices/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax0.0",
    );
    t.symlink(
        "sys/bus/dax/devices/dax0.0/driver",
        "../../../../bus/dax/drivers/kmem",
    );
    for n in 0..3 {
        t.file(
            &format!("sys/kernel/mm/mempolicy/weighted_interleave/node{n}"),
            "1\n",
        );
    }
    t
}

#[test]
fn xeon_max_flat_mode_has_four_cpuless_hbm_nodes_with_claims() {
    let f = read(&xeon_max_flat_snc4());
    assert_eq!(f.nodes.len(), 8);
    assert_eq!(f.tiers, vec![4]);
    for n in &f.nodes[4..] {
        assert!(n.cpus.is_empty());
        assert_eq!(n.memory_bytes, Some(16 << 30));
        assert_eq!(n.tier, Some(4));
        let c = &n.hmat[1];
        assert_eq!(c.initiators, vec![n.id - 4]);
        assert_eq!(c.read_bandwidth_mbps, Some(200_000));
        assert_eq!(c.read_latency_ns, Some(130));
    }
    assert_eq!(f.nodes[1].cpus, (14..28).collect::<Vec<u32>>());
    assert!(f.interleave_weights.is_none());
    assert!(f.notes.is_empty(), "{:?}", f.notes);
}

#[test]
fn grace_hopper_gpu_memory_is_named_by_its_driver() {
    let f = read(&grace_hopper());
    assert_eq!(
        f.nodes[1].device.as_deref(),
        Some("nvidia 0009:01:00.0, online")
    );
    assert_eq!(f.nodes[0].device, None);
    assert_eq!(f.nodes[2].memory_bytes, Some(0));
    assert!(f.notes.iter().any(|n| n.contains("HMAT")));
}

#[test]
fn cxl_region_dax_and_lower_tier_are_read() {
    let f = read(&cxl_expander());
    assert_eq!(f.tiers, vec![4, 22]);
    let n = &f.nodes[2];
    assert_eq!(n.cxl_regions, vec!["region0".to_string()]);
    assert_eq!(n.dax_devices, vec!["dax0.0 (kmem)".to_string()]);
    assert_eq!(n.tier, Some(22));
    // Zero and missing entries are "not stated", never 0.
    assert_eq!(n.hmat[0].write_bandwidth_mbps, None);
    assert_eq!(n.hmat[0].write_latency_ns, None);
    assert_eq!(n.hmat[0].initiators, vec![0, 1]);
    assert_eq!(f.interleave_weights, Some(vec![(0, 1), (1, 1), (2, 1)]));
}

#[test]
fn an_empty_or_broken_tree_is_empty_with_notes() {
    let f = read(&MapTree::default());
    assert!(f.nodes.is_empty());
    assert_eq!(f.notes.len(), 2);
    let mut t = MapTree::default();
    t.file(&format!("{NODE}/online"), "0-1\n");
    t.node(0, "0-1", 1);
    // Node 1 went offline between the listing and the reads; HMAT values
    // are garbage.
    t.file(
        &format!("{NODE}/node0/access0/initiators/read_bandwidth"),
        "x\n",
    );
    t.file(
        &format!("{NODE}/node0/access0/initiators/read_latency"),
        "0\n",
    );
    t.file("sys/bus/dax/devices/dax1.0/target_node", "-1\n");
    let f = read(&t);
    assert_eq!(f.nodes[1].memory_bytes, None);
    assert!(f.nodes[1].cpus.is_empty());
    assert!(f.nodes[0].hmat.is_empty(), "{:?}", f.nodes[0].hmat);
}
