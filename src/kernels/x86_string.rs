//! String instructions as kernels: `lods`, `stos` and `movs` at every
//! width (b/w/d/q), each as a plain unrolled loop (16 instructions per
//! iteration, the pointer registers advancing implicitly) and with `rep`
//! (`string!` in `shapes.rs`).
//!
//! Z. Smith's `bandwidth` benchmark added `lods` "proving just how slow they are": a
//! `lodsq` is several micro-ops on current cores, while `rep movs`/`rep
//! stos` are microcoded fast paths (ERMS/FSRM). `rep_movsb` and `rep_stosb`
//! live in `x86.rs` with the foundation kernels; the rest are here.
//!
//! Reads: the plain `lods` loop adds every loaded unit (zero-extended:
//! `rax` is zeroed first and `lodsb`/`lodsw` only write `al`/`ax`) into an
//! accumulator, so its checksum proves each unit was read once. `rep lods`
//! keeps only the last unit, which is what it returns.

kernels! {
    lodsb: Read 8 Scalar, Seq cached, block 16, align 1,
        "lodsb + add (8-bit loads through al)", string!(lods "lodsb");
    lodsw: Read 16 Scalar, Seq cached, block 32, align 2,
        "lodsw + add (16-bit loads through ax)", string!(lods "lodsw");
    lodsd: Read 32 Scalar, Seq cached, block 64, align 4,
        "lodsd + add (32-bit loads through eax)", string!(lods "lodsd");
    lodsq: Read 64 Scalar, Seq cached, block 128, align 8,
        "lodsq + add (64-bit loads through rax)", string!(lods "lodsq");
    rep_lodsb: Read 8 Scalar, Seq cached, block 1, align 1,
        "rep lodsb (each byte overwrites al)", string!(rep_lods "lodsb");
    rep_lodsw: Read 16 Scalar, Seq cached, block 2, align 2,
        "rep lodsw", string!(rep_lods "lodsw");
    rep_lodsd: Read 32 Scalar, Seq cached, block 4, align 4,
        "rep lodsd", string!(rep_lods "lodsd");
    rep_lodsq: Read 64 Scalar, Seq cached, block 8, align 8,
        "rep lodsq", string!(rep_lods "lodsq");
    stosb: Write 8 Scalar, Seq cached, block 16, align 1,
        "stosb unrolled (no rep)", string!(stos "stosb");
    stosw: Write 16 Scalar, Seq cached, block 32, align 2,
        "stosw unrolled (no rep)", string!(stos "stosw");
    stosd: Write 32 Scalar, Seq cached, block 64, align 4,
        "stosd unrolled (no rep)", string!(stos "stosd");
    stosq: Write 64 Scalar, Seq cached, block 128, align 8,
        "stosq unrolled (no rep)", string!(stos "stosq");
    rep_stosw: Write 16 Scalar, Seq cached, block 2, align 2,
        "rep stosw (microcoded fill)", string!(rep_stos "stosw");
    rep_stosd: Write 32 Scalar, Seq cached, block 4, align 4,
        "rep stosd (microcoded fill)", string!(rep_stos "stosd");
    rep_stosq: Write 64 Scalar, Seq cached, block 8, align 8,
        "rep stosq (microcoded fill)", string!(rep_stos "stosq");
    movsb: Copy 8 Scalar, Seq cached, block 16, align 1,
        "movsb unrolled (no rep)", string!(movs "movsb");
    movsw: Copy 16 Scalar, Seq cached, block 32, align 2,
        "movsw unrolled (no rep)", string!(movs "movsw");
    movsd: Copy 32 Scalar, Seq cached, block 64, align 4,
        "movsd unrolled (no rep)", string!(movs "movsd");
    movsq: Copy 64 Scalar, Seq cached, block 128, align 8,
        "movsq unrolled (no rep)", string!(movs "movsq");
    rep_movsw: Copy 16 Scalar, Seq cached, block 2, align 2,
        "rep movsw (microcoded copy)", string!(rep_movs "movsw");
    rep_movsd: Copy 32 Scalar, Seq cached, block 4, align 4,
        "rep movsd (microcoded copy)", string!(rep_movs "movsd");
    rep_movsq: Copy 64 Scalar, Seq cached, block 8, align 8,
        "rep movsq (microcoded copy)", string!(rep_movs "movsq");
}
