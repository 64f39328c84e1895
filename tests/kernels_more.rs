//! Correctness of the random-order, string-instruction, chase and register
//! kernels on real buffers: checksums prove what was read, read-backs prove
//! what was written, and guard regions around the working set prove that
//! nothing outside it was touched. On AArch64 (under qemu-user in CI)
//! the same checks run over its kernels.

use bwscope::kernels::{self, perm, registry, Kernel, KernelArgs, Op, Pattern};
use bwscope::memory::{Buffer, PageKind};

const GUARD: usize = 4096;

/// A buffer laid out as guard | src | gap | dst | guard, randomly filled,
/// with a copy of its bytes to compare against.
struct Fixture {
    buf: Buffer,
    len: usize,
    before: Vec<u8>,
}

impl Fixture {
    fn new(len: usize, seed: u64) -> Fixture {
        let total = GUARD + len + GUARD + len + GUARD;
        let buf = Buffer::new(total, PageKind::NoHuge, seed).unwrap();
        let before = buf.as_slice().to_vec();
        Fixture { buf, len, before }
    }
    fn src(&mut self) -> *mut u8 {
        unsafe { self.buf.as_mut_ptr().add(GUARD) }
    }
    fn dst(&mut self) -> *mut u8 {
        unsafe { self.buf.as_mut_ptr().add(2 * GUARD + self.len) }
    }
    fn src_range(&self) -> std::ops::Range<usize> {
        GUARD..GUARD + self.len
    }
    fn dst_range(&self) -> std::ops::Range<usize> {
        2 * GUARD + self.len..2 * GUARD + 2 * self.len
    }
    /// Every byte outside `allowed` is as it was.
    fn assert_untouched_except(&self, allowed: Option<std::ops::Range<usize>>, what: &str) {
        let now = self.buf.as_slice();
        for (i, (a, b)) in now.iter().zip(&self.before).enumerate() {
            if allowed.as_ref().is_some_and(|r| r.contains(&i)) {
                continue;
            }
            assert_eq!(a, b, "{what}: byte {i} outside the working set changed");
        }
    }
}

fn sum_units(bytes: &[u8], unit: usize) -> u64 {
    bytes.chunks_exact(unit).fold(0u64, |acc, c| {
        let mut v = [0u8; 8];
        v[..unit].copy_from_slice(c);
        acc.wrapping_add(u64::from_le_bytes(v))
    })
}

/// What a read kernel's checksum must be after `reps` passes over `bytes`.
fn expected_read(k: &Kernel, bytes: &[u8], reps: u64) -> u64 {
    match (k.name, k.width_bits) {
        (n, w) if n.starts_with("rep_lods") => {
            let unit = w as usize / 8;
            sum_units(&bytes[bytes.len() - unit..], unit)
        }
        (n, w) if n.starts_with("lods") => sum_units(bytes, w as usize / 8).wrapping_mul(reps),
        // 32-bit accumulators: the sum of u32 words modulo 2^32.
        (_, 32) => (sum_units(bytes, 4).wrapping_mul(reps)) & 0xffff_ffff,
        _ => sum_units(bytes, 8).wrapping_mul(reps),
    }
}

fn here(k: &Kernel) -> bool {
    let ok = k.supported(&bwscope::platform::cpu::detect_features());
    if !ok {
        eprintln!("skipping {}: needs {}", k.name, k.isa.name());
    }
    ok
}

fn args_for(k: &Kernel, f: &mut Fixture, reps: u64, index: &[u32]) -> KernelArgs {
    let mut a = KernelArgs::new(f.src(), f.dst(), f.len, reps);
    a.pattern = 0x0123_4567_89ab_cdef;
    if k.pattern == Pattern::Random {
        a.index = index.as_ptr();
        a.index_len = index.len();
    }
    a
}

/// The value a write kernel leaves in every `unit` of its stream.
fn pattern_unit(k: &Kernel, pattern: u64) -> Vec<u8> {
    let unit = (k.width_bits as usize / 8).clamp(1, 8);
    pattern.to_le_bytes()[..unit].to_vec()
}

fn check_kernel(k: &'static Kernel, len: usize, seed: u64) {
    let mut f = Fixture::new(len, seed);
    let mut index = perm::padded(perm::shuffled(len / 64, seed ^ 0x77));
    // The read-ahead entries must never be used as addresses: make them
    // point far outside the buffer (a use would fault or corrupt).
    for x in &mut index[len / 64..] {
        *x = u32::MAX;
    }
    let reps = 3;
    let a = args_for(k, &mut f, reps, &index);
    let src_bytes = f.buf.as_slice()[f.src_range()].to_vec();
    unsafe { (k.func)(&a) };
    match k.op {
        Op::Read => {
            f.assert_untouched_except(None, k.name);
            // The timed loop only loads; its verification variant (the
            // same loop adding every word) proves what it read.
            let r = unsafe { (k.verify_fn())(&a) };
            assert_eq!(
                r,
                expected_read(k, &src_bytes, reps),
                "{} checksum over {} bytes",
                k.name,
                len
            );
            f.assert_untouched_except(None, k.name);
        }
        Op::Write => {
            let unit = pattern_unit(k, a.pattern);
            let dst = &f.buf.as_slice()[f.dst_range()];
            for (i, c) in dst.chunks_exact(unit.len()).enumerate() {
                assert_eq!(c, &unit[..], "{}: unit {} not written", k.name, i);
            }
            f.assert_untouched_except(Some(f.dst_range()), k.name);
        }
        Op::Copy => {
            assert_eq!(
                &f.buf.as_slice()[f.dst_range()],
                &src_bytes[..],
                "{}: copy differs",
                k.name
            );
            f.assert_untouched_except(Some(f.dst_range()), k.name);
        }
        // No CPU kernel has another op (the registry's tests check).
        _ => unreachable!(),
    }
}

#[test]
fn random_kernels_touch_every_line_once_and_nothing_else() {
    let ks: Vec<&Kernel> = registry()
        .iter()
        .filter(|k| k.pattern == Pattern::Random)
        .collect();
    // x86-64: read/write/copy at 32..512 bits; AArch64: ldr x, ldp x,
    // ld1 {4 × q}, ldp q.
    let want = if cfg!(target_arch = "aarch64") {
        12
    } else {
        15
    };
    assert_eq!(ks.len(), want, "random read/write/copy at every width");
    for k in ks.into_iter().filter(|k| here(k)) {
        for (len, seed) in [(256, 1), (4096, 2), (64 * 1000, 3)] {
            check_kernel(k, len, seed);
        }
    }
}

#[test]
fn random_read_checksum_catches_a_line_read_twice() {
    // The check above can fail: an index that visits line 0 twice and
    // line 1 never gives a different checksum.
    let k = registry()
        .iter()
        .find(|k| k.name == "rand_read_64_scalar")
        .unwrap();
    let mut f = Fixture::new(4096, 5);
    let mut index = perm::padded(perm::shuffled(64, 9));
    let good = {
        let a = args_for(k, &mut f, 1, &index);
        unsafe { (k.verify_fn())(&a) }
    };
    let p1 = index[..64].iter().position(|&x| x == 1).unwrap();
    index[p1] = 0;
    let a = args_for(k, &mut f, 1, &index);
    let bad = unsafe { (k.verify_fn())(&a) };
    assert_ne!(good, bad);
}

#[test]
fn seq_and_random_reads_agree() {
    let mut f = Fixture::new(64 * 512, 8);
    let index = perm::padded(perm::shuffled(512, 4));
    let widths: &[&str] = if cfg!(target_arch = "aarch64") {
        &["64_scalar", "128_scalar", "128_neon", "256_neon"]
    } else {
        &["64_scalar", "128_sse2", "256_avx2", "512_avx512f"]
    };
    for w in widths {
        let s = registry()
            .iter()
            .find(|k| k.name == format!("seq_read_{w}"))
            .unwrap();
        let r = registry()
            .iter()
            .find(|k| k.name == format!("rand_read_{w}"))
            .unwrap();
        if !here(s) {
            continue;
        }
        let a = args_for(s, &mut f, 2, &index);
        let b = args_for(r, &mut f, 2, &index);
        assert_eq!(
            unsafe { (s.verify_fn())(&a) },
            unsafe { (r.verify_fn())(&b) },
            "{w}"
        );
    }
}

#[test]
#[cfg(target_arch = "x86_64")]
fn string_kernels_move_exactly_their_stream() {
    let names = [
        "lodsb",
        "lodsw",
        "lodsd",
        "lodsq",
        "rep_lodsb",
        "rep_lodsw",
        "rep_lodsd",
        "rep_lodsq",
        "stosb",
        "stosw",
        "stosd",
        "stosq",
        "rep_stosb",
        "rep_stosw",
        "rep_stosd",
        "rep_stosq",
        "movsb",
        "movsw",
        "movsd",
        "movsq",
        "rep_movsb",
        "rep_movsw",
        "rep_movsd",
        "rep_movsq",
    ];
    for n in names {
        let k = registry()
            .iter()
            .find(|k| k.name == n)
            .unwrap_or_else(|| panic!("{n} missing"));
        for (len, seed) in [(128, 11), (4096, 12), (16 * 8 * 77, 13)] {
            check_kernel(k, len, seed);
        }
    }
}

#[test]
fn register_kernels_deliver_their_values_and_keep_the_stack() {
    let ks: Vec<&Kernel> = registry()
        .iter()
        .filter(|k| k.pattern == Pattern::Register)
        .collect();
    assert!(
        ks.len()
            >= if cfg!(target_arch = "aarch64") {
                11
            } else {
                16
            }
    );
    for k in ks.into_iter().filter(|k| here(k)) {
        for p in [0u64, 7, u64::MAX - 2, 0x5a5a_1234_9876_a5a5] {
            // Locals on the stack around the call must survive the stack
            // kernels' pushes and rsp adjustments.
            let canary: [u64; 64] =
                std::array::from_fn(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut a = KernelArgs::new(std::ptr::null(), std::ptr::null_mut(), 0, 100);
            a.pattern = p;
            let r = unsafe { (k.func)(std::hint::black_box(&a)) };
            assert_eq!(
                r,
                p.wrapping_mul(4).wrapping_add(6),
                "{} with p = {p:#x}",
                k.name
            );
            let again: [u64; 64] =
                std::array::from_fn(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            assert_eq!(
                std::hint::black_box(canary),
                again,
                "{} clobbered the caller's stack",
                k.name
            );
        }
        // Bytes per iteration are declared as instructions × width.
        assert_eq!(k.granule % (k.width_bits as usize / 8), 0, "{}", k.name);
    }
}

#[test]
fn chase_kernel_follows_a_written_chain_for_exactly_its_hops() {
    let k = registry()
        .iter()
        .find(|k| k.pattern == Pattern::Chase)
        .unwrap();
    assert_eq!(k.op, Op::Latency);
    for (lines, seed) in [(16usize, 1u64), (256, 2), (4096, 3)] {
        let mut b = Buffer::new(lines * 64, PageKind::NoHuge, seed).unwrap();
        let base = b.as_mut_ptr();
        let order = perm::random_cycle(lines, seed);
        let start = unsafe { bwscope::measure::chase::write_chain(base, 64, &order) };
        // After k×16 hops the pointer is node order[k×16 mod n].
        for reps in [1u64, 3, lines as u64 / 16, lines as u64 / 16 + 1] {
            let a = KernelArgs::new(start, std::ptr::null_mut(), 0, reps);
            let end = unsafe { (k.func)(&a) };
            let hops = (reps * 16) as usize % lines;
            assert_eq!(
                end,
                base as u64 + order[hops] as u64 * 64,
                "{lines} lines, {reps} reps"
            );
        }
    }
}

#[test]
fn team_gives_each_worker_its_own_permutation_and_full_coverage() {
    use bwscope::measure::kernel::TeamKernel;
    use bwscope::measure::team::{Job, Team};
    use bwscope::measure::{SampleOpts, Sampler};
    let allowed = bwscope::platform::topology::allowed_cpus();
    let cpus: Vec<u32> = allowed.iter().copied().take(2).collect();
    let k = registry()
        .iter()
        .find(|k| k.name == "rand_read_64_scalar")
        .unwrap();
    let ws = 64 << 10;
    let team = Team::spawn(&cpus, ws + 4096, PageKind::NoHuge).unwrap();
    let opts = SampleOpts {
        samples: 2,
        min_sample: std::time::Duration::from_millis(1),
        settle: None,
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut w = TeamKernel::private(&team, k, ws).unwrap();
    let m = Sampler::new(opts, &stop).measure(&mut w, None).unwrap();
    // The timed loop only loads: run its verification variant through the
    // team the same way (each worker its own buffer and permutation).
    let ix = perm::index_for(k, ws, cpus.len()).unwrap();
    let verify: &'static Kernel = Box::leak(Box::new(Kernel {
        func: k.verify_fn(),
        ..k.clone()
    }));
    let job = Job {
        kernel: verify,
        stream_len: ws,
        reps: m.reps,
        pattern: 0,
        index: Some(ix.clone()),
        shared: None,
    };
    for (i, t) in team.run(&job).iter().enumerate() {
        let words = team.inspect(i, move |b| sum_units(&b.as_slice()[..ws], 8));
        assert_eq!(t.checksum, words.wrapping_mul(m.reps), "worker {i}");
    }
    // Distinct orders per worker, each a permutation of the lines.
    let lines = ws / 64;
    let per = lines + perm::READ_AHEAD;
    assert_eq!(ix.len(), per * cpus.len());
    for chunk in ix.chunks(per) {
        let mut sorted = chunk[..lines].to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..lines as u32).collect::<Vec<_>>());
    }
    if cpus.len() == 2 {
        assert_ne!(ix[..lines], ix[per..per + lines]);
    }
}

#[test]
fn timed_reads_cover_the_stream_their_verification_checks() {
    // Every sequential and random read kernel is timed as a pure-load loop
    // (`func`) and verified by the same loop adding every word
    // (`checksum`, checked against a reference sum above). Here: the two
    // are distinct functions of one descriptor (one granule and alignment
    // for both), and the timed loop reads every page of its stream and
    // nothing outside it (guard pages fault).
    let ks: Vec<&Kernel> = registry()
        .iter()
        .filter(|k| {
            k.op == Op::Read
                && kernels::name_prefix(&k.pattern).is_some_and(|p| k.name.starts_with(p))
        })
        .collect();
    // x86-64: seq and rand at 32..512 bits; AArch64: seq at every width
    // (ldnp and SVE included) and rand at four.
    let want = if cfg!(target_arch = "aarch64") {
        11
    } else {
        10
    };
    assert_eq!(ks.len(), want, "every seq and rand read");
    for k in ks {
        let verify = k
            .checksum
            .unwrap_or_else(|| panic!("{} has no checksum variant", k.name));
        assert_ne!(
            k.func as usize, verify as usize,
            "{}: timed loop is the checksum loop",
            k.name
        );
        assert_eq!(k.verify_fn() as usize, verify as usize);
        if !here(k) {
            continue;
        }
        let pages = 48;
        let len = pages * 4096;
        // Fresh pages between two guard pages (`os::mem::Guarded`).
        let fresh = bwscope::os::mem::Guarded::new(pages).unwrap();
        assert!(
            fresh.touched().unwrap().iter().all(|&t| !t),
            "{}: fresh pages already mapped",
            k.name
        );
        let index = perm::padded(perm::shuffled(len / 64, 21));
        let mut a = KernelArgs::new(fresh.stream(), std::ptr::null_mut(), len, 1);
        if k.pattern == Pattern::Random {
            a.index = index.as_ptr();
            a.index_len = index.len();
        }
        unsafe { (k.func)(&a) };
        let missed: Vec<usize> = fresh
            .touched()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, &t)| !t)
            .map(|(i, _)| i)
            .collect();
        assert!(
            missed.is_empty(),
            "{}: timed loop never read pages {missed:?}",
            k.name
        );
        // And the verification variant reads the same stream (all zero here).
        assert_eq!(unsafe { verify(&a) }, 0, "{}", k.name);
    }
}
