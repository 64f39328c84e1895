//! How bytes move: one descriptor per kernel and the registry of them all.
//!
//! A [`Kernel`] declares, next to its code, everything the harness needs:
//! name, op, width, ISA, temporal or not, how many streams it reads and
//! writes, and its granule. The harness derives bandwidth **only** from
//! these declarations and the bytes actually covered (likwid's `BYTES`,
//! divan's `BytesCount`). Adding a kernel is one declaration in its
//! source file's `kernels!` list (`decl.rs`), which emits the function and
//! its descriptor; [`registry`] joins the files' lists (`PARTS`).

#[macro_use]
mod decl;
#[cfg(target_arch = "x86_64")]
#[macro_use]
mod shapes;

#[cfg(target_arch = "aarch64")]
#[macro_use]
mod arm_shapes;

#[cfg(target_arch = "aarch64")]
mod arm;
#[cfg(target_arch = "aarch64")]
mod arm_chase;
#[cfg(target_arch = "aarch64")]
mod arm_rand;
#[cfg(target_arch = "aarch64")]
mod arm_regs;
pub mod c2c;
mod libc_k;
pub mod perm;
mod pick;
#[cfg(target_arch = "x86_64")]
mod x86;
#[cfg(target_arch = "x86_64")]
mod x86_chase;
#[cfg(target_arch = "x86_64")]
mod x86_rand;
#[cfg(target_arch = "x86_64")]
mod x86_regs;
#[cfg(target_arch = "x86_64")]
mod x86_string;

use serde::{Deserialize, Serialize};

use crate::model::Features;
pub use pick::{loops, named, select, select_streaming, widest, widest_nt};

/// Arguments of one kernel call: `reps` passes over `len` bytes per stream.
///
/// `src` is the read stream and `dst` the write stream. Both are aligned to
/// the kernel's `align`, `len` is a non-zero multiple of its `granule`, and
/// `reps` ≥ 1: the kernels rely on these and the harness guarantees them.
#[derive(Debug, Clone, Copy)]
pub struct KernelArgs {
    pub src: *const u8,
    pub dst: *mut u8,
    pub len: usize,
    pub reps: u64,
    /// Value that write kernels store (broadcast to their width).
    pub pattern: u64,
    /// Access order for random-pattern kernels: line indices (may be null).
    /// A random kernel visits line `index[k]` (bytes `64 * index[k]..+64`
    /// of each stream) for k in `0..len / 64`, and may read (never use)
    /// `perm::READ_AHEAD` entries more: `index_len >= len / 64 + READ_AHEAD`.
    pub index: *const u32,
    pub index_len: usize,
}

impl KernelArgs {
    pub fn new(src: *const u8, dst: *mut u8, len: usize, reps: u64) -> KernelArgs {
        KernelArgs {
            src,
            dst,
            len,
            reps,
            pattern: 0x5a5a_1234_9876_a5a5,
            index: std::ptr::null(),
            index_len: 0,
        }
    }
}

/// A kernel: `reps` passes. Returns a checksum where the kernel computes
/// one (see [`Kernel::checksum`]), 0 otherwise.
///
/// # Safety
/// The pointers must be valid for `len` bytes as described in
/// [`KernelArgs`], and the CPU must have the kernel's [`Isa`].
pub type KernelFn = unsafe fn(&KernelArgs) -> u64;

/// What a kernel does and how it walks its buffer are the record's own
/// words ([`crate::model::Op`], [`crate::model::Pattern`]): a kernel's
/// record carries them as they are, so a case means one thing in the
/// registry, a record and the history store. A kernel uses the CPU's few
/// (`read`, `write`, `copy`, `latency`; `seq`, `random`, `pages`, `chase`,
/// `reg`); the rest belong to other suites.
pub use crate::model::{Op, Pattern};

/// The instruction set a kernel needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    /// Baseline x86-64 general-purpose instructions.
    Scalar,
    Sse2,
    /// SSE4.1 (`pinsrq`/`pextrq`).
    Sse41,
    Avx2,
    Avx512f,
    /// A libc function: whatever the C library picks at run time.
    Libc,
    /// AArch64 Advanced SIMD (`asimd` in the hwcaps).
    Neon,
    /// AArch64 SVE, at whatever vector length the core has.
    Sve,
    /// AArch64 `dc zva`, where `DCZID_EL0` permits it.
    #[serde(rename = "dc_zva")]
    DcZva,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse2 => "sse2",
            Isa::Sse41 => "sse41",
            Isa::Avx2 => "avx2",
            Isa::Avx512f => "avx512f",
            Isa::Libc => "libc",
            Isa::Neon => "neon",
            Isa::Sve => "sve",
            Isa::DcZva => "dc_zva",
        }
    }

    /// Whether the CPU described by `f` runs it. `Scalar` is the baseline
    /// of the architecture the binary is built for (only its kernels are in
    /// the registry).
    pub fn supported(self, f: &Features) -> bool {
        match self {
            Isa::Scalar | Isa::Libc => true,
            Isa::Sse2 => f.sse2,
            Isa::Sse41 => f.sse4_1,
            Isa::Avx2 => f.avx2,
            Isa::Avx512f => f.avx512f,
            Isa::Neon => f.asimd,
            Isa::Sve => f.sve,
            Isa::DcZva => f.dc_zva,
        }
    }

    /// Why a CPU without it cannot run it, naming the feature, and for
    /// AArch64's whether `BWSCOPE_DISABLE_ISA` hid it or the core lacks it.
    pub fn missing(self) -> String {
        let hidden = |names: &[&str]| {
            std::env::var("BWSCOPE_DISABLE_ISA")
                .is_ok_and(|l| l.split(',').any(|n| names.contains(&n.trim())))
        };
        let (names, lacks): (&[&str], &str) = match self {
            Isa::Neon => (&["asimd", "neon"], "this core has no Advanced SIMD"),
            Isa::Sve => (&["sve"], "this core has no SVE"),
            Isa::DcZva => (&["dc_zva"], "DCZID_EL0.DZP prohibits `dc zva` here"),
            _ => return format!("needs {}", self.name()),
        };
        let why = if hidden(names) {
            "BWSCOPE_DISABLE_ISA hides it"
        } else {
            lacks
        };
        format!("needs {}: {why}", self.name())
    }
}

/// The name prefix of a pattern's bandwidth kernels (`seq_`, `rand_`,
/// `pages_`).
pub fn name_prefix(p: &Pattern) -> Option<&'static str> {
    match p {
        Pattern::Seq => Some("seq_"),
        Pattern::Random => Some("rand_"),
        Pattern::Pages => Some("pages_"),
        _ => None,
    }
}

/// How a kernel's code is written, which says what its declared width
/// means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// A loop of the declared width's instructions (the sequential,
    /// random-order, chase and register kernels).
    Loop,
    /// String instructions unrolled without `rep`: one access of the
    /// declared width each.
    String,
    /// A `rep` string instruction: microcode picks its own access width
    /// (whole lines for `rep movsb`/`rep stosb` on ERMS cores).
    RepString,
    /// A call into a library (libc's `memcpy`, `memset`): the library picks.
    Call,
    /// A cache-block instruction (AArch64's `dc zva`): each one writes a
    /// whole block whose size the core states (`DCZID_EL0`), so no access
    /// width of the kernel's own bounds it.
    Block,
}

/// A kernel's descriptor: the single source of truth for its bytes.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: &'static str,
    pub op: Op,
    /// Bits moved per instruction (AArch64: per access, so a pair of q
    /// registers is 256 and each register of an `ld1 {…}` 128); 0 where
    /// not fixed (libc, SVE: the vector length, `dc zva`: the block).
    pub width_bits: u32,
    pub isa: Isa,
    pub nontemporal: bool,
    pub pattern: Pattern,
    pub form: Form,
    /// Bytes per stream must be a multiple of this (the unrolled block).
    pub granule: usize,
    /// Required alignment of each stream.
    pub align: usize,
    pub description: &'static str,
    /// The function to time.
    pub func: KernelFn,
    /// A read kernel's verification variant: the same loop over the same
    /// addresses as `func`, adding every word into the checksum it returns
    /// (u32 words for 32-bit kernels, u64 lanes otherwise, times `reps`).
    /// `func` itself only loads — accumulating in the timed loop cost a
    /// quarter of the L1 read bandwidth on Golden Cove — so the proof that
    /// every byte was read is this, run once outside the timed samples.
    /// `None` where `func` is its own proof (writes and copies leave their
    /// destination to check; `lods`, the chase and the register kernels
    /// return their checksum from the timed loop).
    pub checksum: Option<KernelFn>,
}

/// Bytes one pass moves, per the declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassBytes {
    /// Bytes per stream actually covered.
    pub stream_len: usize,
    pub read: u64,
    pub written: u64,
    /// Bytes delivered: a read's bytes read, a write's or copy's written.
    pub payload: u64,
}

impl Kernel {
    pub fn streams_read(&self) -> u32 {
        matches!(self.op, Op::Read | Op::Copy | Op::Latency) as u32
    }

    pub fn streams_written(&self) -> u32 {
        matches!(self.op, Op::Write | Op::Copy) as u32
    }

    pub fn streams(&self) -> u32 {
        self.streams_read() + self.streams_written()
    }

    /// Split a working set of `ws` bytes into streams and round each down to
    /// the granule; `None` if less than one granule per stream.
    pub fn pass_bytes(&self, ws: usize) -> Option<PassBytes> {
        let per = ws / self.streams() as usize;
        let stream_len = per - per % self.granule;
        if stream_len == 0 {
            return None;
        }
        let read = (stream_len * self.streams_read() as usize) as u64;
        let written = (stream_len * self.streams_written() as usize) as u64;
        Some(PassBytes {
            stream_len,
            read,
            written,
            payload: if written > 0 { written } else { read },
        })
    }

    pub fn supported(&self, f: &Features) -> bool {
        self.isa.supported(f)
    }

    /// Whether the cache sweep can run it: a bandwidth kernel over a
    /// working set (not a chase or a register kernel).
    pub fn sweepable(&self) -> bool {
        matches!(
            self.pattern,
            Pattern::Seq | Pattern::Random | Pattern::Pages
        ) && self.op != Op::Latency
    }

    /// The same kernel in another pattern (`seq_read_256_avx2` ↔
    /// `rand_read_256_avx2`), if the registry has it.
    pub fn counterpart(&self, p: Pattern) -> Option<&'static Kernel> {
        let (from, to) = (name_prefix(&self.pattern)?, name_prefix(&p)?);
        let stem = self.name.strip_prefix(from)?;
        registry()
            .iter()
            .find(|k| k.pattern == p && k.name.strip_prefix(to) == Some(stem))
    }

    /// The function whose result proves what the kernel did: the
    /// verification variant of a read kernel that has one, else `func`.
    /// Call it with the same arguments as `func` after the timed samples.
    pub fn verify_fn(&self) -> KernelFn {
        self.checksum.unwrap_or(self.func)
    }

    /// What the verification variant returns after `reps` passes over
    /// `stream` (its read stream's bytes, in any order): the wrapping sum
    /// of the stream's words — u32 words for 32-bit kernels, u64 otherwise
    /// — times `reps`. `None` for kernels without a verification variant.
    pub fn expected_checksum(&self, stream: &[u8], reps: u64) -> Option<u64> {
        self.checksum?;
        // One loop per word size, each with a fixed-size conversion: a
        // slice copy of a run-time length became a libc `memcpy` call per
        // word, and the sum ran at well under 1 GB/s (about 0.3 s per read
        // record at 256 MiB, Zen 4).
        let word = if self.width_bits == 32 { 4 } else { 8 };
        let sum = if word == 4 {
            stream.chunks_exact(4).fold(0u64, |acc, w| {
                acc.wrapping_add(u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
            })
        } else {
            stream.chunks_exact(8).fold(0u64, |acc, w| {
                let b: [u8; 8] = w.try_into().expect("chunks of 8");
                acc.wrapping_add(u64::from_le_bytes(b))
            })
        };
        let total = sum.wrapping_mul(reps);
        Some(if word == 4 {
            total & 0xffff_ffff
        } else {
            total
        })
    }

    /// Run the verification variant with the arguments the timed samples
    /// used and compare its checksum with the stream's contents: the proof
    /// that the timed loop, which only loads, read every byte. `Ok` for
    /// kernels without a verification variant.
    ///
    /// # Safety
    /// As for calling `func` with `a` (and `a.src` valid for `a.len`
    /// initialised bytes).
    pub unsafe fn verify(&self, a: &KernelArgs) -> Result<(), String> {
        let Some(f) = self.checksum else {
            return Ok(());
        };
        let got = f(a);
        let stream = std::slice::from_raw_parts(a.src, a.len);
        match self.expected_checksum(stream, a.reps) {
            Some(want) if want != got => Err(format!(
                "{}: checksum {got:#x} where the stream sums to {want:#x}: the loop did not read every byte once",
                self.name
            )),
            _ => Ok(()),
        }
    }

    /// Why it cannot run here, if it cannot.
    pub fn skip_reason(&self, f: &Features) -> Option<String> {
        (!self.supported(f)).then(|| self.isa.missing())
    }
}

/// Every kernel, in display order: sequential kernels by op, width, store
/// kind; `rep_movsb`/`rep_stosb` and libc; then random-order kernels, the
/// other string instructions, the pointer chase and register transfers.
pub fn registry() -> &'static [Kernel] {
    static ALL: std::sync::OnceLock<Vec<Kernel>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| PARTS.iter().flat_map(|p| p.iter().cloned()).collect())
}

#[cfg(target_arch = "x86_64")]
static PARTS: &[&[Kernel]] = &[
    x86::KERNELS,
    libc_k::KERNELS,
    x86_rand::KERNELS,
    x86_string::KERNELS,
    x86_chase::KERNELS,
    x86_regs::KERNELS,
];

#[cfg(target_arch = "aarch64")]
static PARTS: &[&[Kernel]] = &[
    arm::KERNELS,
    libc_k::KERNELS,
    arm_rand::KERNELS,
    arm_chase::KERNELS,
    arm_regs::KERNELS,
];

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
static PARTS: &[&[Kernel]] = &[libc_k::KERNELS];

/// The SVE vector length this thread's SVE kernels run with, bits (`rdvl`
/// × 8); None without SVE and off AArch64.
pub fn sve_vector_bits() -> Option<u32> {
    #[cfg(target_arch = "aarch64")]
    return arm::sve_vector_bits();
    #[cfg(not(target_arch = "aarch64"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_systematic() {
        let mut names: Vec<&str> = registry().iter().map(|k| k.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate kernel names");
        for k in registry().iter().filter(|k| k.name.starts_with("seq_")) {
            // Vector-length agnostic kernels (SVE) have no fixed width.
            let width = match k.width_bits {
                0 => String::new(),
                w => format!("_{w}"),
            };
            let expect = format!(
                "seq_{}{}{}_{}",
                k.op,
                width,
                if k.nontemporal { "_nt" } else { "" },
                k.isa.name()
            );
            assert_eq!(k.name, expect);
        }
    }

    #[test]
    fn kernels_use_the_cpus_words_of_the_model() {
        // The registry's op and pattern are the record's words; a CPU
        // kernel uses only these (the loops' dispatch relies on it).
        for k in registry() {
            assert!(
                matches!(k.op, Op::Read | Op::Write | Op::Copy | Op::Latency),
                "{}: op {}",
                k.name,
                k.op
            );
            assert!(
                matches!(
                    k.pattern,
                    Pattern::Seq
                        | Pattern::Random
                        | Pattern::Pages
                        | Pattern::Chase
                        | Pattern::Register
                ),
                "{}: pattern {}",
                k.name,
                k.pattern
            );
        }
    }

    #[test]
    fn missing_features_are_named() {
        // (BWSCOPE_DISABLE_ISA is not set in the test environment.)
        if std::env::var_os("BWSCOPE_DISABLE_ISA").is_none() {
            assert_eq!(Isa::Sve.missing(), "needs sve: this core has no SVE");
            assert!(Isa::DcZva.missing().contains("DCZID_EL0.DZP"));
        }
        assert_eq!(Isa::Avx2.missing(), "needs avx2");
        let none = Features::default();
        assert!(!Isa::Neon.supported(&none) && Isa::Scalar.supported(&none));
    }

    #[test]
    fn copy_counts_half_read_half_written() {
        let k = registry()
            .iter()
            .find(|k| k.name == "seq_copy_64_scalar")
            .unwrap();
        let b = k.pass_bytes(1 << 20).unwrap();
        assert_eq!(b.read, 1 << 19);
        assert_eq!(b.written, 1 << 19);
        assert_eq!(b.read + b.written, 1 << 20);
        assert_eq!(b.payload, 1 << 19);
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod correctness;
