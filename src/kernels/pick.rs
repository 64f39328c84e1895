//! Picking kernels by what they are: the loops of an op and pattern a CPU
//! runs, the widest of them, a kernel by name, and the `--kernel` list.
//! Suites ask these instead of matching name prefixes, so a wider kernel
//! is used wherever it runs without another edit.

use super::{registry, Form, Kernel, Op, Pattern};
use crate::model::Features;

/// The loop kernels ([`Form::Loop`]) of `op` in `pattern` that run on a
/// CPU with `f`, cached and non-temporal, in registry order.
pub fn loops(op: Op, pattern: Pattern, f: &Features) -> impl Iterator<Item = &'static Kernel> + '_ {
    registry()
        .iter()
        .filter(move |k| k.form == Form::Loop && k.op == op && k.pattern == pattern)
        .filter(move |k| k.supported(f))
}

/// The widest cached loop kernel of `op` in `pattern` that runs on a CPU
/// with `f` (`seq_read_512_avx512f` on an AVX-512 core).
pub fn widest(op: Op, pattern: Pattern, f: &Features) -> Option<&'static Kernel> {
    loops(op, pattern, f)
        .filter(|k| !k.nontemporal)
        .max_by_key(|k| k.width_bits)
}

/// The widest non-temporal loop kernel of `op` in `pattern` here.
pub fn widest_nt(op: Op, pattern: Pattern, f: &Features) -> Option<&'static Kernel> {
    loops(op, pattern, f)
        .filter(|k| k.nontemporal)
        .max_by_key(|k| k.width_bits)
}

/// The kernel called `name`.
pub fn named(name: &str) -> Option<&'static Kernel> {
    registry().iter().find(|k| k.name == name)
}

/// Select kernels by comma-separated names or prefixes. An entry matches a
/// kernel whose name equals it or starts with it; `all` matches everything.
/// An entry that matches nothing is an error naming it.
pub fn select(spec: &str) -> Result<Vec<&'static Kernel>, String> {
    let mut out: Vec<&'static Kernel> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let matched: Vec<&'static Kernel> = registry()
            .iter()
            .filter(|k| item == "all" || k.name == item || k.name.starts_with(item))
            .collect();
        if matched.is_empty() {
            return Err(format!(
                "unknown kernel '{}': run `bwscope kernels` for the list (names and prefixes like seq_read, rep_, libc_ work)",
                item
            ));
        }
        for k in matched {
            if !out.iter().any(|o| o.name == k.name) {
                out.push(k);
            }
        }
    }
    if out.is_empty() {
        return Err("no kernel named: give names or prefixes, e.g. seq_read,rep_movsb".into());
    }
    Ok(out)
}

/// [`select`] for suites that stream over plain buffers (threads, numa,
/// memtype): random-order, chase and register kernels need an access order
/// or no buffer at all, so naming one is an error, not a crash. The
/// four-page kernels stream over plain buffers too.
pub fn select_streaming(spec: &str) -> Result<Vec<&'static Kernel>, String> {
    let ks = select(spec)?;
    if let Some(k) = ks.iter().find(|k| {
        !matches!(k.pattern, Pattern::Seq | Pattern::Pages)
            || !matches!(k.op, Op::Read | Op::Write | Op::Copy)
    }) {
        return Err(format!(
            "{} is a {} kernel; this suite runs sequential read/write/copy kernels (`bwscope kernels seq_`)",
            k.name,
            k.pattern
        ));
    }
    Ok(ks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four-page copies are loops over plain buffers, named
    /// `pages_` beside their one-stream twins.
    #[test]
    fn pages_kernels_are_streaming_loops_twinned_with_seq_ones() {
        let pages: Vec<_> = registry()
            .iter()
            .filter(|k| k.pattern == Pattern::Pages)
            .collect();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(pages.len(), 2);
        for k in &pages {
            assert!(
                k.name.starts_with("pages_copy_") && k.nontemporal,
                "{}",
                k.name
            );
            assert_eq!((k.form, k.granule), (Form::Loop, 16384), "{}", k.name);
            assert!(k.sweepable(), "{}", k.name);
            assert_eq!(select_streaming(k.name).unwrap()[0].name, k.name);
            let seq = k.counterpart(Pattern::Seq).expect("a one-stream twin");
            assert_eq!(
                (&seq.op, seq.width_bits, seq.nontemporal),
                (&k.op, k.width_bits, true)
            );
            assert_eq!(
                seq.counterpart(Pattern::Pages).map(|x| x.name),
                Some(k.name)
            );
        }
    }

    #[test]
    fn the_sequential_loops_are_exactly_the_seq_kernels() {
        for k in registry().iter().filter(|k| k.pattern == Pattern::Seq) {
            assert_eq!(
                k.form == Form::Loop,
                k.name.starts_with("seq_"),
                "{}",
                k.name
            );
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn forms_follow_the_shapes_and_queries_read_them() {
        let form = |n: &str| named(n).unwrap().form;
        assert_eq!(form("rep_movsb"), Form::RepString);
        assert_eq!(form("rep_lodsq"), Form::RepString);
        assert_eq!(form("lodsb"), Form::String);
        assert_eq!(form("libc_memcpy"), Form::Call);
        assert_eq!(form("chase_latency_64_scalar"), Form::Loop);
        let all = Features {
            sse2: true,
            sse4_1: true,
            avx: true,
            avx2: true,
            avx512f: true,
            ..Features::default()
        };
        let w = |op, p, f: &Features| widest(op, p, f).map(|k| k.name);
        assert_eq!(
            w(Op::Read, Pattern::Seq, &all),
            Some("seq_read_512_avx512f")
        );
        assert_eq!(
            w(Op::Copy, Pattern::Random, &all),
            Some("rand_copy_512_avx512f")
        );
        let avx2 = Features {
            avx512f: false,
            ..all.clone()
        };
        assert_eq!(
            w(Op::Write, Pattern::Seq, &avx2),
            Some("seq_write_256_avx2")
        );
        assert_eq!(
            widest_nt(Op::Write, Pattern::Seq, &avx2).map(|k| k.name),
            Some("seq_write_256_nt_avx2")
        );
        let none = Features::default();
        assert_eq!(w(Op::Read, Pattern::Seq, &none), Some("seq_read_64_scalar"));
    }

    #[test]
    #[cfg(target_arch = "aarch64")]
    fn arm_forms_follow_the_shapes_and_queries_read_them() {
        let form = |n: &str| named(n).unwrap().form;
        assert_eq!(form("dc_zva"), Form::Block);
        assert_eq!(form("libc_memcpy"), Form::Call);
        assert_eq!(form("seq_read_sve"), Form::Loop);
        let neon = Features {
            asimd: true,
            dc_zva: true,
            ..Features::default()
        };
        let w = |op, f: &Features| widest(op, Pattern::Seq, f).map(|k| k.name);
        assert_eq!(w(Op::Read, &neon), Some("seq_read_256_neon"));
        assert_eq!(w(Op::Copy, &neon), Some("seq_copy_256_neon"));
        assert_eq!(
            widest_nt(Op::Write, Pattern::Seq, &neon).map(|k| k.name),
            Some("seq_write_256_nt_neon")
        );
        // SVE kernels have no fixed width: the widest stays a NEON one,
        // and `dc zva` is no loop of its own width.
        let sve = Features {
            sve: true,
            ..neon.clone()
        };
        assert_eq!(w(Op::Write, &sve), Some("seq_write_256_neon"));
        assert!(loops(Op::Write, Pattern::Seq, &sve).all(|k| k.name != "dc_zva"));
        assert_eq!(
            w(Op::Read, &Features::default()),
            Some("seq_read_128_scalar")
        );
    }

    #[test]
    fn select_by_prefix_and_errors() {
        let k = select("seq_read").unwrap();
        assert!(k.len() >= 4 && k.iter().all(|k| k.name.starts_with("seq_read")));
        assert!(select("nope")
            .unwrap_err()
            .contains("unknown kernel 'nope'"));
        assert_eq!(select("libc_memcpy,libc_memcpy").unwrap().len(), 1);
    }
}
