//! Read/write traffic mixes and the engines that drive them on a team.
//!
//! A [`Mix`] is a traffic ratio `R:W` (bytes read : bytes written) with
//! cached or non-temporal stores. A thread runs it by walking its buffer in
//! chunks of [`CHUNK`] bytes: within every group of `R + W` consecutive
//! chunks the first `R` are read with the widest read kernel and the next
//! `W` written with the widest (NT) write kernel. So `3:1` reads three
//! chunks for every one it writes, and the memory controller sees the same
//! mix of reads and writes MLC's `-W3` produces (MLC interleaves per line;
//! chunks of 64 KiB keep the asm kernels at full speed and the call
//! overhead below 0.1 %). Roles are mixes too: `read` = `1:0`, `write` =
//! `0:1`, `ntwrite` = `0:1nt`.
//!
//! Two engines:
//! - [`MixWork`]: a workload for the sampler — every worker does `reps`
//!   passes of its own mix, all released by one barrier;
//! - [`stream_until`]: a load thread streams in small chunks with a delay
//!   after each, until told to stop (background load, MLC's injection).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::kernel::PATTERN;
use super::sampler::{timed, Call, Workload};
use super::team::{SpinBarrier, Team};
use crate::kernels::{self, Kernel, KernelArgs, Op};
use crate::model::Host;

/// Bytes per chunk of a mix pass: a multiple of every kernel's granule.
pub const CHUNK: usize = 64 << 10;

/// A traffic ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Mix {
    pub reads: u32,
    pub writes: u32,
    /// Writes use non-temporal stores.
    pub nt: bool,
}

impl Mix {
    pub const READ: Mix = Mix {
        reads: 1,
        writes: 0,
        nt: false,
    };
    pub const WRITE: Mix = Mix {
        reads: 0,
        writes: 1,
        nt: false,
    };
    pub const NTWRITE: Mix = Mix {
        reads: 0,
        writes: 1,
        nt: true,
    };

    /// Parse `read`, `write`, `ntwrite`, or `R:W` with an optional `nt`
    /// suffix (`3:1`, `1:1nt`).
    pub fn parse(s: &str) -> Result<Mix, String> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "read" | "r" => return Ok(Mix::READ),
            "write" | "w" => return Ok(Mix::WRITE),
            "ntwrite" | "nt" => return Ok(Mix::NTWRITE),
            _ => {}
        }
        let (body, nt) = match t.strip_suffix("nt") {
            Some(b) => (b, true),
            None => (t.as_str(), false),
        };
        let bad = || {
            format!(
                "'{}' is not a mix: write read, write, ntwrite, or R:W like 3:1 (reads:writes), with nt for non-temporal stores (1:1nt)",
                s.trim()
            )
        };
        let (r, w) = body.split_once(':').ok_or_else(bad)?;
        let r: u32 = r.trim().parse().map_err(|_| bad())?;
        let w: u32 = w.trim().parse().map_err(|_| bad())?;
        if r + w == 0 || r > 16 || w > 16 {
            return Err(format!(
                "'{}': each side of R:W must be 0..16 and not both 0",
                s.trim()
            ));
        }
        if nt && w == 0 {
            return Err(format!(
                "'{}': nt applies to writes, and this mix writes nothing",
                s.trim()
            ));
        }
        Ok(Mix {
            reads: r,
            writes: w,
            nt,
        })
    }

    /// The name used in records and tables: `read`, `write`, `ntwrite`,
    /// else `R:W` (+`nt`).
    pub fn name(&self) -> String {
        match (self.reads, self.writes, self.nt) {
            (_, 0, _) => "read".into(),
            (0, _, false) => "write".into(),
            (0, _, true) => "ntwrite".into(),
            (r, w, nt) => format!("{}:{}{}", r, w, if nt { "nt" } else { "" }),
        }
    }

    fn period(&self) -> usize {
        (self.reads + self.writes) as usize
    }

    /// Is chunk `j` of a pass read (true) or written?
    fn reads_chunk(&self, j: usize) -> bool {
        j % self.period() < self.reads as usize
    }
}

/// Parse a comma-separated list of mixes.
pub fn parse_list(s: &str) -> Result<Vec<Mix>, String> {
    let v: Vec<Mix> = s
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(Mix::parse)
        .collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err("the list is empty: e.g. read,3:1,2:1,1:1,write".into());
    }
    Ok(v)
}

/// MLC's set: all reads, 3:1, 2:1, 1:1, write-only.
pub const DEFAULT_MIXES: &str = "read,3:1,2:1,1:1,write";

/// The kernels a mix uses: the widest supported read, write and NT write.
#[derive(Debug, Clone, Copy)]
pub struct MixKernels {
    pub read: &'static Kernel,
    pub write: &'static Kernel,
    pub ntwrite: &'static Kernel,
}

impl MixKernels {
    pub fn widest(host: &Host) -> MixKernels {
        let f = &host.features;
        let always = "scalar kernels always run";
        MixKernels {
            read: kernels::widest(Op::Read, kernels::Pattern::Seq, f).expect(always),
            write: kernels::widest(Op::Write, kernels::Pattern::Seq, f).expect(always),
            ntwrite: kernels::widest_nt(Op::Write, kernels::Pattern::Seq, f).expect(always),
        }
    }

    /// The kernel of chunk `j` of a pass of `m`.
    pub fn for_chunk(&self, m: &Mix, j: usize) -> &'static Kernel {
        if m.reads_chunk(j) {
            self.read
        } else if m.nt {
            self.ntwrite
        } else {
            self.write
        }
    }

    /// Short description for records: `mix of seq_read_512_avx512f + ...`.
    pub fn describe(&self, m: &Mix) -> Vec<&'static str> {
        let mut v = Vec::new();
        if m.reads > 0 {
            v.push(self.read.name);
        }
        if m.writes > 0 {
            v.push(if m.nt {
                self.ntwrite.name
            } else {
                self.write.name
            });
        }
        v
    }
}

/// Bytes one pass of `m` over `ws` bytes reads and writes: whole groups of
/// `R + W` chunks only, so the ratio is exact. `None` when `ws` holds less
/// than one group.
pub fn pass_bytes(m: &Mix, ws: usize) -> Option<(u64, u64, usize)> {
    let groups = ws / CHUNK / m.period();
    if groups == 0 {
        return None;
    }
    let chunks = groups * m.period();
    let r = (groups * m.reads as usize * CHUNK) as u64;
    let w = (groups * m.writes as usize * CHUNK) as u64;
    Some((r, w, chunks))
}

/// One pass (or part of one) of `m` over `chunks` chunks at `base`.
///
/// # Safety
/// `base..base + chunks * CHUNK` is owned, writable, 2 MiB aligned memory
/// and the kernels are supported by this CPU.
pub unsafe fn pass(ks: &MixKernels, m: &Mix, base: *mut u8, chunks: usize, pattern: u64) -> u64 {
    let mut sum = 0u64;
    for j in 0..chunks {
        let p = base.add(j * CHUNK);
        let k = ks.for_chunk(m, j);
        let mut a = KernelArgs::new(p, p, CHUNK, 1);
        a.pattern = pattern;
        sum = sum.wrapping_add((k.func)(&a));
    }
    sum
}

/// Every worker runs passes of its own mix (`mixes[i]`) over the first
/// `ws` bytes of its buffer, all released by one barrier.
pub struct MixWork<'a> {
    team: &'a Team,
    ks: MixKernels,
    mixes: Arc<Vec<Mix>>,
    ws: usize,
}

impl<'a> MixWork<'a> {
    /// `None` when `ws` holds less than one group of chunks of a mix.
    pub fn new(team: &'a Team, ks: MixKernels, mixes: &[Mix], ws: usize) -> Option<MixWork<'a>> {
        assert_eq!(mixes.len(), team.threads(), "one mix per worker");
        if mixes.iter().any(|m| pass_bytes(m, ws).is_none()) {
            return None;
        }
        Some(MixWork {
            team,
            ks,
            mixes: Arc::new(mixes.to_vec()),
            ws,
        })
    }

    /// Bytes read and written by one pass of worker `i`.
    pub fn pass_of(&self, i: usize) -> (u64, u64) {
        let (r, w, _) = pass_bytes(&self.mixes[i], self.ws).expect("checked in new");
        (r, w)
    }
}

impl Workload for MixWork<'_> {
    fn units_per_rep(&self) -> u64 {
        (0..self.mixes.len())
            .map(|i| {
                let (r, w) = self.pass_of(i);
                r + w
            })
            .sum()
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        let barrier = Arc::new(SpinBarrier::new(self.team.threads()));
        let (ks, mixes, ws) = (self.ks, self.mixes.clone(), self.ws);
        let stamps = self.team.run_each(move |i, buf| {
            let m = mixes[i];
            let (_, _, chunks) = pass_bytes(&m, ws.min(buf.len())).unwrap_or((0, 0, 0));
            let base = buf.as_mut_ptr();
            barrier.wait();
            timed(|| {
                let mut sum = 0u64;
                for _ in 0..reps {
                    // SAFETY: chunks * CHUNK ≤ ws ≤ buffer length; the
                    // kernels come from `MixKernels::widest`, which only
                    // picks supported ones.
                    sum = sum.wrapping_add(unsafe { pass(&ks, &m, base, chunks, PATTERN) });
                }
                sum
            })
        });
        Ok(Call {
            stamps,
            device_seconds: None,
        })
    }
}

/// Load-thread chunk: small, so a delay after each chunk throttles the
/// stream smoothly (MLC delays between line accesses; 4 KiB = 64 lines).
pub const LOAD_CHUNK: usize = 4 << 10;

/// What a load thread injected.
#[derive(Debug, Clone, Copy, Default)]
pub struct Injected {
    pub seconds: f64,
    pub bytes: u64,
}

/// Stream `m` over `buf_len` bytes at `base` in [`LOAD_CHUNK`] pieces,
/// spinning `delay` after each piece, until `stop` is set. `started` is
/// incremented once the stream runs, so the probe can wait for it.
///
/// # Safety
/// `base..base+buf_len` is owned, writable, 2 MiB aligned memory.
pub unsafe fn stream_until(
    ks: &MixKernels,
    m: &Mix,
    base: *mut u8,
    buf_len: usize,
    delay: Duration,
    stop: &AtomicBool,
    started: &std::sync::atomic::AtomicUsize,
) -> Injected {
    let chunks = (buf_len / LOAD_CHUNK).max(1);
    let t0 = Instant::now();
    started.fetch_add(1, Ordering::AcqRel);
    let mut bytes = 0u64;
    let mut j = 0usize;
    let mut sum = 0u64;
    while !stop.load(Ordering::Relaxed) {
        // Group by 64 KiB like a mix pass: chunk j's op follows its 64 KiB
        // block, so the R:W ratio matches the fixed-work engine.
        let k = ks.for_chunk(m, j * LOAD_CHUNK / CHUNK);
        let p = base.add((j % chunks) * LOAD_CHUNK);
        let a = KernelArgs::new(p, p, LOAD_CHUNK, 1);
        sum = sum.wrapping_add((k.func)(&a));
        bytes += LOAD_CHUNK as u64;
        j += 1;
        if j == chunks {
            j = 0;
        }
        if !delay.is_zero() {
            let until = Instant::now() + delay;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
    }
    std::hint::black_box(sum);
    Injected {
        seconds: t0.elapsed().as_secs_f64(),
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::PageKind;

    #[test]
    fn parses_mlc_ratios_and_roles() {
        assert_eq!(Mix::parse("read").unwrap(), Mix::READ);
        assert_eq!(Mix::parse("ntwrite").unwrap(), Mix::NTWRITE);
        assert_eq!(
            Mix::parse("3:1").unwrap(),
            Mix {
                reads: 3,
                writes: 1,
                nt: false
            }
        );
        assert_eq!(
            Mix::parse("1:1nt").unwrap(),
            Mix {
                reads: 1,
                writes: 1,
                nt: true
            }
        );
        assert_eq!(Mix::parse("0:1").unwrap().name(), "write");
        assert_eq!(Mix::parse("2:0").unwrap().name(), "read");
        assert_eq!(Mix::parse("2:1").unwrap().name(), "2:1");
        for bad in ["", "3", "0:0", "a:b", "1:0nt", "99:1"] {
            assert!(Mix::parse(bad).is_err(), "{bad} should be refused");
        }
        assert_eq!(parse_list(DEFAULT_MIXES).unwrap().len(), 5);
    }

    #[test]
    fn pass_bytes_keep_the_ratio_exact() {
        let m = Mix::parse("3:1").unwrap();
        let (r, w, chunks) = pass_bytes(&m, 10 * CHUNK).unwrap();
        assert_eq!(chunks, 8);
        assert_eq!(r, 3 * w);
        assert_eq!(r + w, 8 * CHUNK as u64);
        assert!(pass_bytes(&m, 3 * CHUNK).is_none());
    }

    #[test]
    fn a_mix_reads_and_writes_what_it_says() {
        let host = crate::platform::detect_host(false);
        let ks = MixKernels::widest(&host);
        let cpu = *crate::platform::topology::allowed_cpus().last().unwrap();
        let team = Team::spawn(&[cpu], 8 * CHUNK, PageKind::Regular).unwrap();
        let m = Mix::parse("1:1").unwrap();
        let mut w = MixWork::new(&team, ks, &[m], 8 * CHUNK).unwrap();
        assert_eq!(w.pass_of(0), (4 * CHUNK as u64, 4 * CHUNK as u64));
        assert_eq!(w.units_per_rep(), 8 * CHUNK as u64);
        w.run(2).unwrap();
        // Chunk 1 (a write chunk) holds the pattern now; chunk 0 (read) not.
        let (w, r) = team.inspect(0, |b| {
            let s = b.as_slice();
            let word = |o: usize| u64::from_ne_bytes(s[o..o + 8].try_into().unwrap());
            (word(CHUNK), word(0))
        });
        assert_eq!(w, 0x5a5a_1234_9876_a5a5);
        assert_ne!(r, 0x5a5a_1234_9876_a5a5);
    }
}
