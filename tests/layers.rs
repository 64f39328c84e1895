//! The layers point one way (docs/architecture.md): this test parses every
//! source file and fails when a layer names a module it may not. Every
//! path counts — `use` trees (`use crate::{model::Run, report::sink}`,
//! `use crate::report;`), paths in code (`crate::report::views::render`),
//! `super::` paths resolved from the file's place — so a shortcut across
//! layers never lands unnoticed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Each layer (a top-level module of the crate) and the layers it may
/// name besides itself. A layer not listed here is a test failure: a new
/// top-level module says where it sits.
const ALLOWED: &[(&str, &[&str])] = &[
    // The leaves.
    ("model", &[]),
    ("util", &[]),
    ("error", &["util"]),
    ("stats", &["model"]),
    // The operating system: the only layer that calls it (see OS_ONLY).
    ("os", &["model", "util", "error"]),
    // Facts and tools of the machine.
    ("platform", &["model", "util", "error", "stats", "os"]),
    ("memory", &["model", "util", "error", "os", "platform"]),
    // (Its tests detect the CPU and map buffers.)
    (
        "kernels",
        &["model", "util", "error", "os", "platform", "memory"],
    ),
    ("transfer", &["model", "util", "error", "os", "memory"]),
    ("net", &["model", "util", "error", "os"]),
    // Fleet's transport: ranks, rendezvous, control, pair tests.
    ("cluster", &["model", "util", "error", "os", "net"]),
    // Planning helpers the suites share: cpus, memory fit, sizes.
    (
        "plan",
        &["model", "util", "error", "os", "platform", "kernels"],
    ),
    // One sampler, the workers and the workloads.
    (
        "measure",
        &[
            "model", "util", "error", "stats", "os", "kernels", "memory", "platform",
        ],
    ),
    // Suites plan and measure; they never print and never see the CLI.
    (
        "suites",
        &[
            "model", "util", "error", "stats", "os", "kernels", "memory", "platform", "measure",
            "transfer", "net", "plan",
        ],
    ),
    // The run history (SQLite): app records runs and reads standings
    // through it; the report sees only what app put on the run.
    (
        "history",
        &["model", "util", "error", "stats", "os", "judge"],
    ),
    // The judgement room: one rule for "usual" and "stepped", pure.
    ("judge", &["model", "stats"]),
    // The report reads the model (and formats with util); it writes its
    // files through os.
    (
        "report",
        &["model", "util", "error", "stats", "os", "judge"],
    ),
    // The command line: clap definitions only.
    ("cli", &["model", "util", "error"]),
    // The top floor.
    (
        "app",
        &[
            "model", "util", "error", "stats", "os", "kernels", "memory", "platform", "measure",
            "transfer", "net", "cluster", "suites", "report", "cli", "plan", "history", "judge",
        ],
    ),
];

/// Crates of the command line, allowed only in `cli` and `app`.
const CLI_CRATES: &[&str] = &["clap", "clap_complete", "clap_mangen"];

/// Every path a use tree spells out, from its root: `use a::{b, c::*}` is
/// `a::b` and `a::c`; `use a::{self, b}` is `a` and `a::b`.
fn use_paths(t: &syn::UseTree) -> Vec<Vec<String>> {
    fn walk(prefix: &mut Vec<String>, t: &syn::UseTree, out: &mut Vec<Vec<String>>) {
        let mut leaf = |ident: Option<&syn::Ident>| {
            let mut p = prefix.clone();
            p.extend(ident.filter(|i| *i != "self").map(|i| i.to_string()));
            out.push(p);
        };
        match t {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(prefix, &p.tree, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => leaf(Some(&n.ident)),
            syn::UseTree::Rename(r) => leaf(Some(&r.ident)),
            syn::UseTree::Glob(_) => leaf(None),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(prefix, t, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&mut Vec::new(), t, &mut out);
    out
}

/// What only the `os` layer may name: the system's own crates and
/// modules, configuration by operating system, and the system's paths.
/// Everything else asks `os` (docs/architecture.md).
const OS_CRATES: &[&str] = &["libc", "windows_sys"];
const OS_STD_MODULES: &[&str] = &["unix", "windows", "fd"];
const OS_CFG: &[&str] = &["unix", "windows", "target_os", "target_family"];
const OS_PATH_PREFIXES: &[&str] = &["/proc/", "/sys/", "/dev/"];

/// Collects what a file names of the system (see [`OS_CRATES`]).
#[derive(Default)]
struct SystemNames {
    found: BTreeSet<String>,
    /// Depth of `#[cfg(test)]` items being read: the system's paths are
    /// allowed in tests (fixtures name them), the rest is not.
    in_test: usize,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().trim() == "test")
    })
}

impl SystemNames {
    fn segments(&mut self, segs: &[String]) {
        match segs {
            [first, _, ..] if OS_CRATES.contains(&first.as_str()) => {
                self.found.insert(format!("{first}::"));
            }
            [std, os, m, ..]
                if (std == "std" || std == "core")
                    && os == "os"
                    && OS_STD_MODULES.contains(&m.as_str()) =>
            {
                self.found.insert(format!("std::os::{m}"));
            }
            _ => {}
        }
    }

    /// Tokens (attribute arguments, macro bodies): a `cfg` naming the
    /// operating system, and paths spelled inside.
    fn tokens(&mut self, tokens: proc_macro2::TokenStream, in_cfg: bool) {
        let t: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        let mut path: Vec<String> = Vec::new();
        for (i, tt) in t.iter().enumerate() {
            match tt {
                proc_macro2::TokenTree::Group(g) => {
                    let cfg = in_cfg
                        || matches!(i.checked_sub(1).map(|j| &t[j]),
                            Some(proc_macro2::TokenTree::Ident(id)) if id == "cfg" || id == "cfg_attr" || id == "all" || id == "any" || id == "not");
                    self.tokens(g.stream(), cfg);
                    path.clear();
                }
                proc_macro2::TokenTree::Ident(id) => {
                    let id = id.to_string();
                    if in_cfg && OS_CFG.contains(&id.as_str()) {
                        self.found.insert(format!("cfg({id})"));
                    }
                    path.push(id);
                    let p = path.clone();
                    self.segments(&p);
                }
                proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => {}
                proc_macro2::TokenTree::Literal(l) => {
                    self.literal(&l.to_string());
                    path.clear();
                }
                _ => path.clear(),
            }
        }
    }

    fn literal(&mut self, quoted: &str) {
        if self.in_test > 0 {
            return;
        }
        let Some(s) = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')) else {
            return;
        };
        if OS_PATH_PREFIXES.iter().any(|p| s.starts_with(p)) && !s.contains(char::is_whitespace) {
            self.found.insert(format!("\"{s}\""));
        }
    }
}

impl<'ast> Visit<'ast> for SystemNames {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let test = is_cfg_test(&m.attrs);
        self.in_test += usize::from(test);
        syn::visit::visit_item_mod(self, m);
        self.in_test -= usize::from(test);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = is_cfg_test(&f.attrs);
        self.in_test += usize::from(test);
        syn::visit::visit_item_fn(self, f);
        self.in_test -= usize::from(test);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for p in use_paths(&u.tree) {
            self.segments(&p);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.segments(&segs);
        syn::visit::visit_path(self, p);
    }

    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if a.path().is_ident("cfg") || a.path().is_ident("cfg_attr") {
            if let Ok(l) = a.meta.require_list() {
                self.tokens(l.tokens.clone(), true);
            }
        }
        syn::visit::visit_attribute(self, a);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone(), m.path.is_ident("cfg"));
        syn::visit::visit_macro(self, m);
    }

    fn visit_lit_str(&mut self, l: &'ast syn::LitStr) {
        self.literal(&format!("{:?}", l.value()));
    }
}

/// What `code` names of the system.
fn system_names(code: &str) -> BTreeSet<String> {
    let file = syn::parse_file(code).expect("parses");
    let mut n = SystemNames::default();
    n.visit_file(&file);
    n.found
}

/// The module path of a source file (`src/suites/numa/cell.rs` →
/// `suites::numa::cell`; a `mod.rs` is its folder).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Collects the top-level crate modules and external crates a file names.
struct Names {
    /// The module being read (the file's, then inline `mod`s within it),
    /// for `super::` and `self::`.
    module: Vec<String>,
    crate_modules: BTreeSet<String>,
    crates: BTreeSet<String>,
    /// Every crate path named outside test code, from the crate's root
    /// (for the file rings).
    full: BTreeSet<Vec<String>>,
    /// Paths that do not start at the crate, from this module: a child
    /// module's when the file has one of that name.
    relative: BTreeSet<Vec<String>>,
    /// Depth of `#[cfg(test)]` items being read.
    in_test: usize,
}

impl Names {
    /// A path's leading segments: where it points, if inside the crate.
    fn resolve(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else {
            return;
        };
        let absolute: Option<Vec<String>> = match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "super" | "self" => {
                let mut base = self.module.clone();
                let mut rest = segments;
                while let Some(s) = rest.first() {
                    match s.as_str() {
                        "super" => {
                            base.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                Some(base)
            }
            _ => {
                self.crates.insert(first.clone());
                // Or a child module of this one (`mod x;` … `x::f()`).
                if self.in_test == 0 {
                    let mut p = self.module.clone();
                    p.extend(segments.iter().cloned());
                    self.relative.insert(p);
                }
                None
            }
        };
        if let Some(a) = absolute {
            if let Some(top) = a.first() {
                self.crate_modules.insert(top.clone());
            }
            if self.in_test == 0 {
                self.full.insert(a);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let test = usize::from(is_cfg_test(&m.attrs));
        self.in_test += test;
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
        self.in_test -= test;
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = usize::from(is_cfg_test(&f.attrs));
        self.in_test += test;
        syn::visit::visit_item_fn(self, f);
        self.in_test -= test;
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if is_cfg_test(&u.attrs) {
            return;
        }
        if u.leading_colon.is_some() {
            // `use ::clap::Parser`: an external crate.
            if let syn::UseTree::Path(p) = &u.tree {
                self.crates.insert(p.ident.to_string());
            }
            return;
        }
        for p in use_paths(&u.tree) {
            self.resolve(&p);
        }
    }

    /// Macro bodies are tokens, not syntax: `crate::x` in them counts too.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        fn scan(n: &mut Names, tokens: proc_macro2::TokenStream) {
            let t: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
            for (i, tt) in t.iter().enumerate() {
                match tt {
                    proc_macro2::TokenTree::Group(g) => scan(n, g.stream()),
                    proc_macro2::TokenTree::Ident(id) if id == "crate" => {
                        if let Some(proc_macro2::TokenTree::Ident(next)) = t.get(i + 3) {
                            n.resolve(&["crate".to_string(), next.to_string()]);
                        }
                    }
                    _ => {}
                }
            }
        }
        scan(self, m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() > 1 {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.resolve(&segs);
        }
        syn::visit::visit_path(self, p);
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// What `code` (the file `module`) names: crate modules and crates.
fn names(module: &[String], code: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let n = read_names(module, code);
    (n.crate_modules, n.crates)
}

fn read_names(module: &[String], code: &str) -> Names {
    let file = syn::parse_file(code).unwrap_or_else(|e| panic!("{module:?}: {e}"));
    let mut n = Names {
        module: module.to_vec(),
        crate_modules: BTreeSet::new(),
        crates: BTreeSet::new(),
        full: BTreeSet::new(),
        relative: BTreeSet::new(),
        in_test: 0,
    };
    n.visit_file(&file);
    n
}

/// The problems of one file of layer `layer`.
fn problems(layer: &str, module: &[String], code: &str, where_: &str) -> Vec<String> {
    let allowed: BTreeSet<&str> = match ALLOWED.iter().find(|(l, _)| *l == layer) {
        Some((_, a)) => a.iter().copied().chain([layer]).collect(),
        None => return vec![format!("{where_}: layer {layer} is not in tests/layers.rs")],
    };
    let layers: BTreeSet<&str> = ALLOWED.iter().map(|(l, _)| *l).collect();
    let (modules, crates) = names(module, code);
    let mut out = Vec::new();
    for m in &modules {
        if layers.contains(m.as_str()) && !allowed.contains(m.as_str()) {
            out.push(format!("{where_} ({layer}) names crate::{m}"));
        }
    }
    if !matches!(layer, "app" | "cli") {
        for c in crates.iter().filter(|c| CLI_CRATES.contains(&c.as_str())) {
            out.push(format!("{where_} uses {c} (the CLI belongs to cli/app)"));
        }
    }
    out
}

#[test]
fn no_layer_names_one_it_may_not() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut all = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let module = module_of(&src, &f);
        // lib.rs and main.rs are the crate's root, above every layer.
        let Some(layer) = module
            .first()
            .filter(|m| !matches!(m.as_str(), "lib" | "main"))
        else {
            continue;
        };
        let code = std::fs::read_to_string(&f).unwrap();
        all.extend(problems(layer, &module, &code, &f.display().to_string()));
        edges
            .entry(layer.clone())
            .or_default()
            .extend(names(&module, &code).0);
    }
    assert!(
        all.is_empty(),
        "names that cross the layers the wrong way:\n{}",
        all.join("\n")
    );
    // Every layer of the list exists (a rename leaves no stale rule).
    for (l, _) in ALLOWED {
        assert!(edges.contains_key(*l), "layer {l} has no files");
    }
}

#[test]
fn the_architecture_doc_states_the_same_edges() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // Words of the second cell, parenthesised remarks and "nothing
        // else" aside.
        let mut may = cells[2].to_string();
        while let (Some(a), Some(b)) = (may.find('('), may.find(')')) {
            may.replace_range(a..=b, "");
        }
        let may: BTreeSet<String> = may
            .split(',')
            .map(|w| w.trim().to_string())
            .filter(|w| !w.is_empty() && w != "nothing else")
            .collect();
        for layer in cells[1].split(',').map(|l| l.trim().trim_matches('`')) {
            documented.insert(layer.to_string(), may.clone());
        }
    }
    let listed: BTreeMap<String, BTreeSet<String>> = ALLOWED
        .iter()
        .map(|(l, a)| (l.to_string(), a.iter().map(|x| x.to_string()).collect()))
        .collect();
    let app_all: BTreeSet<String> = ["everything".to_string()].into();
    for (layer, may) in &listed {
        let doc_may = documented
            .get(layer)
            .unwrap_or_else(|| panic!("docs/architecture.md has no row for {layer}"));
        if layer == "app" && doc_may == &app_all {
            continue;
        }
        assert_eq!(doc_may, may, "docs/architecture.md row of {layer}");
    }
}

#[test]
fn the_checker_sees_every_way_of_naming_a_layer() {
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let bad = |layer: &str, module: &str, code: &str| problems(layer, &m(module), code, "x");
    // A group, a bare module, a path in code, a `super` path, a glob, and
    // `super` from an inline module.
    assert_eq!(
        bad(
            "model",
            "model::run",
            "use crate::{util::units, report::sink::Sink};"
        )
        .len(),
        2
    );
    assert_eq!(
        bad("suites", "suites::cache", "use crate::report;").len(),
        1
    );
    assert_eq!(
        bad(
            "suites",
            "suites::cache",
            "use crate::report::{self, views};"
        )
        .len(),
        1
    );
    assert_eq!(
        bad(
            "measure",
            "measure::team",
            "fn f() { crate::suites::cache::run(); }"
        )
        .len(),
        1
    );
    assert_eq!(
        bad(
            "suites",
            "suites::numa::cell",
            "use super::super::super::app::runner;"
        )
        .len(),
        1
    );
    assert_eq!(
        bad("report", "report::csv", "use crate::suites::*;").len(),
        1
    );
    let inline = "mod tests { use super::super::super::report::json; }";
    assert_eq!(bad("suites", "suites::cache", inline).len(), 1);
    assert!(bad("suites", "suites::cache", "mod tests { use super::*; }").is_empty());
    assert_eq!(bad("kernels", "kernels::x86", "use clap::Parser;").len(), 1);
    let in_macro = r#"fn f() { println!("{}", crate::report::views::rate(1.0)); }"#;
    assert_eq!(bad("suites", "suites::cache", in_macro).len(), 1);
    // What is allowed, and what only a comment mentions.
    assert!(bad(
        "suites",
        "suites::numa::cell",
        "use super::*; use crate::model::Run;"
    )
    .is_empty());
    assert!(bad(
        "report",
        "report::csv",
        "// see crate::suites::cache\nuse crate::model::Run;"
    )
    .is_empty());
    assert!(bad("app", "app::mod", "use crate::{report, suites, cli::Cli};").is_empty());
}

#[test]
fn only_the_os_layer_names_the_system() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut all = Vec::new();
    let mut os_names = BTreeSet::new();
    for f in files {
        let module = module_of(&src, &f);
        let code = std::fs::read_to_string(&f).unwrap();
        let names = system_names(&code);
        if module.first().is_some_and(|m| m == "os") {
            os_names.extend(names);
            continue;
        }
        for n in names {
            all.push(format!("{} names {n}", f.display()));
        }
    }
    assert!(
        all.is_empty(),
        "only src/os may name the system's crates, std::os, cfg by operating system or the system's paths:\n{}",
        all.join("\n")
    );
    // The rule sees what it looks for: the layer itself names all of it.
    for n in [
        "libc::",
        "std::os::unix",
        "cfg(target_os)",
        "\"/proc/self/smaps\"",
    ] {
        assert!(os_names.contains(n), "src/os names no {n}: {os_names:?}");
    }
}

#[test]
fn the_system_rule_sees_every_way_of_naming_the_system() {
    let n = |code: &str| system_names(code).into_iter().collect::<Vec<_>>();
    assert_eq!(n("fn f() { unsafe { libc::getpid() }; }"), ["libc::"]);
    assert_eq!(n("use libc::c_int;"), ["libc::"]);
    assert_eq!(n("use std::os::unix::fs::MetadataExt;"), ["std::os::unix"]);
    assert_eq!(n("use std::{os::fd::AsRawFd, io};"), ["std::os::fd"]);
    assert_eq!(
        n("fn f() { let _ = windows_sys::Win32::Foundation::TRUE; }"),
        ["windows_sys::"]
    );
    assert_eq!(n("#[cfg(windows)] fn f() {}"), ["cfg(windows)"]);
    assert_eq!(n("#[cfg(all(unix, test))] fn f() {}"), ["cfg(unix)"]);
    assert_eq!(
        n("#[cfg_attr(target_os = \"linux\", inline)] fn f() {}"),
        ["cfg(target_os)"]
    );
    assert_eq!(
        n("fn f() -> bool { cfg!(not(target_family = \"unix\")) }"),
        ["cfg(target_family)"]
    );
    assert_eq!(
        n("fn f() { let _ = std::fs::read(\"/proc/stat\"); }"),
        ["\"/proc/stat\""]
    );
    assert_eq!(n("fn f() { println!(\"{}\", libc::EINVAL); }"), ["libc::"]);
    // What is not the system: the CPU's architecture, a sentence naming a
    // file, a system path in a test, a module of our own called os.
    assert!(n("#[cfg(target_arch = \"aarch64\")] fn f() {}").is_empty());
    assert!(
        n("fn f() -> &'static str { \"/proc/cpuinfo describes another architecture\" }").is_empty()
    );
    assert!(
        n("#[cfg(test)] mod tests { fn f() { let _ = std::fs::read(\"/dev/zero\"); } }").is_empty()
    );
    assert!(n("use crate::os::fs; fn f() { crate::os::signal::install(); }").is_empty());
}

/// The files each file of `src/` names outside its tests: a crate path
/// belongs to the file of its longest module prefix. A file naming its
/// own ancestors (a child's `super::Ctx`, served by the folder's
/// `mod.rs`) is not counted: the parent declares the child, and a ring
/// through that is the folder itself, not a knot.
fn file_edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).unwrap().display().to_string();
            (module_of(&src, f), rel)
        })
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, rel) in &modules {
        let code = std::fs::read_to_string(src.join(rel)).unwrap();
        let out = edges.entry(rel.clone()).or_default();
        let n = read_names(module, &code);
        let children = n
            .relative
            .into_iter()
            .filter(|p| p.len() > module.len() && modules.contains_key(&p[..=module.len()]));
        for path in n.full.into_iter().chain(children) {
            let Some(target) = (1..=path.len())
                .rev()
                .find(|&n| modules.contains_key(&path[..n]))
                .map(|n| &path[..n])
            else {
                continue;
            };
            if module.starts_with(target) {
                continue;
            }
            out.insert(modules[target].clone());
        }
    }
    edges
}

/// The strongly connected components of more than one file (Tarjan).
fn rings(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.edges.get(v).into_iter().flatten() {
            if !t.index.contains_key(w.as_str()) {
                visit(t, w);
                let l = t.low[w.as_str()].min(t.low[v]);
                t.low.insert(v, l);
            } else if t.on.contains(w.as_str()) {
                let l = t.index[w.as_str()].min(t.low[v]);
                t.low.insert(v, l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut ring = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                ring.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if ring.len() > 1 {
                ring.sort();
                t.out.push(ring);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Prints the file rings and the imports from one suite into another
/// (the measures of docs/architecture.md): `cargo test --test layers
/// -- --ignored --nocapture file_measures`.
#[test]
#[ignore]
fn file_measures() {
    let edges = file_edges();
    let rings = rings(&edges);
    println!("file rings: {}", rings.len());
    for r in &rings {
        println!("  ring of {}: {}", r.len(), r.join(" "));
    }
    let suite_of = |f: &str| -> Option<String> {
        let rest = f.strip_prefix("suites/")?;
        let top = rest.split('/').next()?.trim_end_matches(".rs");
        (top != "mod.rs" && top != "mod").then(|| top.to_string())
    };
    // Every top-level module of suites/ but the record and estimate
    // helpers is a sibling (the shared sizes and cpus live in the `plan`
    // layer below the suites).
    let mut sibling = Vec::new();
    for (from, tos) in &edges {
        let Some(a) = suite_of(from) else { continue };
        for to in tos {
            let Some(b) = suite_of(to).filter(|b| *b != a) else {
                continue;
            };
            if !matches!(b.as_str(), "record" | "estimate") {
                sibling.push(format!("{from} -> {to}"));
            }
        }
    }
    println!("suite-to-sibling imports: {}", sibling.len());
    for s in &sibling {
        println!("  {s}");
    }
}

/// No two files of `src/` name each other, directly or around a ring
/// (docs/architecture.md): a file that needs a sibling's piece gets it
/// from a module below both, so every folder reads bottom-up.
#[test]
fn no_file_rings() {
    let rings = rings(&file_edges());
    assert!(
        rings.is_empty(),
        "files of src/ that name each other around a ring (move the shared piece below them):\n{}",
        rings
            .iter()
            .map(|r| r.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_ring_finder_sees_a_ring_and_only_a_ring() {
    let e = |pairs: &[(&str, &str)]| {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            m.entry(a.to_string()).or_default().insert(b.to_string());
            m.entry(b.to_string()).or_default();
        }
        m
    };
    assert_eq!(
        rings(&e(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    assert!(rings(&e(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
}
