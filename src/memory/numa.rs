//! Where a buffer's pages live: the placement calls of `os::numa` (bind a
//! range, steer a thread's faults, count pages per node), and the room a
//! node has before a binding that cannot spill.

pub use crate::os::numa::{bind_range, census, pages_migrated, set_thread_policy, PageCensus};

/// Refuse a binding of `need` bytes to `node` that would leave it less than
/// 10 % of its free memory; the reason names the sizes.
pub fn check_node_room(node: u32, need: u64) -> Result<(), String> {
    match crate::os::numa::node_free_bytes(node) {
        Some(free) if need > free / 10 * 9 => Err(format!(
            "node {} has {} free but the cell needs {}: use a smaller --size or fewer --threads",
            node,
            crate::util::units::format_bytes(free),
            crate::util::units::format_bytes(need)
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Buffer, PageKind};

    #[test]
    fn census_sees_every_page_on_some_node() {
        if crate::platform::skip_emulated("census_sees_every_page_on_some_node", "move_pages") {
            return;
        }
        let b = Buffer::new(8 << 20, PageKind::Regular, 3).unwrap();
        let c = census(b.as_ptr(), b.len()).unwrap();
        assert_eq!(c.pages, (8 << 20) / 4096);
        let placed: u64 = c.per_node.iter().map(|p| p.1).sum();
        assert_eq!(placed + c.unknown, c.pages);
        assert!(placed as f64 >= 0.99 * c.pages as f64, "{:?}", c);
    }

    #[test]
    fn bind_to_the_first_node_places_every_page() {
        if crate::platform::skip_emulated("bind_to_the_first_node_places_every_page", "mbind") {
            return;
        }
        let node = crate::platform::topology::nodes()[0].id;
        let mut b = Buffer::new(4 << 20, PageKind::Thp, 3).unwrap();
        // SAFETY: the buffer's own page-aligned range.
        unsafe { bind_range(b.as_mut_ptr(), b.len(), node) }.unwrap();
        let c = census(b.as_ptr(), b.len()).unwrap();
        assert_eq!(c.fraction_on(node), 1.0, "{:?}", c);
    }

    #[test]
    fn binding_to_a_missing_node_is_refused() {
        let mut b = Buffer::new(1 << 20, PageKind::Regular, 3).unwrap();
        // SAFETY: as above.
        let e = unsafe { bind_range(b.as_mut_ptr(), b.len(), 1000) }.unwrap_err();
        assert!(e.contains("node 1000"), "{e}");
    }

    #[test]
    fn node_room_is_checked() {
        let node = crate::platform::topology::nodes()[0].id;
        if crate::os::numa::node_free_bytes(node).is_none() {
            return; // no per-node meminfo (no NUMA in this kernel)
        }
        assert!(check_node_room(node, 1 << 20).is_ok());
        let e = check_node_room(node, 1 << 50).unwrap_err();
        assert!(e.contains("--size"), "{e}");
    }

    #[test]
    fn thread_policy_round_trips() {
        if crate::platform::skip_emulated("thread_policy_round_trips", "set_mempolicy") {
            return;
        }
        let node = crate::platform::topology::nodes()[0].id;
        std::thread::spawn(move || {
            set_thread_policy(Some(node)).unwrap();
            let b = Buffer::new(2 << 20, PageKind::Regular, 1).unwrap();
            set_thread_policy(None).unwrap();
            assert_eq!(census(b.as_ptr(), b.len()).unwrap().fraction_on(node), 1.0);
        })
        .join()
        .unwrap();
    }
}
