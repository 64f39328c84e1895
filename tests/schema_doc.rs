//! `docs/schema.md` says what the model writes: every field of the Run,
//! the Host and the Record, and every key of each suite's `extra`, is in
//! its table, and nothing else is. The field names come from the model's
//! source (`src/model/`), read with `syn`, so a field added to a type
//! without its line in the doc (or a line left for a field removed) fails
//! here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Every struct in the files under `dir`, by name.
fn structs(dir: &Path) -> Vec<syn::ItemStruct> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            let file = syn::parse_file(&std::fs::read_to_string(&p).unwrap()).unwrap();
            out.extend(file.items.into_iter().filter_map(|i| match i {
                syn::Item::Struct(s) => Some(s),
                _ => None,
            }));
        }
    }
    out
}

/// The words inside `#[serde(...)]` attributes of a field.
fn serde_words(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut words = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|m| {
            if let Some(id) = m.path.get_ident() {
                words.push(id.to_string());
            }
            // Skip a value (`= "..."`) so parsing goes on.
            if let Ok(v) = m.value() {
                let _: syn::Expr = v.parse()?;
            }
            Ok(())
        });
    }
    words
}

/// The JSON keys a struct is written with: its fields, the fields of
/// flattened structs in their place (`flattened` maps a flattened type to
/// the keys it stands for when it is not among `all`).
fn keys(name: &str, all: &[syn::ItemStruct], flattened: &[(&str, &[&str])]) -> BTreeSet<String> {
    let s = all
        .iter()
        .find(|s| s.ident == name)
        .unwrap_or_else(|| panic!("no struct {name} in the model"));
    let mut out = BTreeSet::new();
    for f in &s.fields {
        let words = serde_words(&f.attrs);
        if words.iter().any(|w| w == "skip") {
            continue;
        }
        if words.iter().any(|w| w == "flatten") {
            let syn::Type::Path(t) = &f.ty else {
                panic!("{name}: a flattened field of an odd type")
            };
            let ty = t.path.segments.last().unwrap().ident.to_string();
            match flattened.iter().find(|(n, _)| *n == ty) {
                Some((_, ks)) => out.extend(ks.iter().map(|k| k.to_string())),
                None => out.extend(keys(&ty, all, flattened)),
            }
            continue;
        }
        out.insert(f.ident.as_ref().unwrap().to_string());
    }
    out
}

/// The lines of `doc` from the heading `heading` to the next heading of
/// the same level or above.
fn section<'a>(doc: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut lines = doc.lines().skip_while(|l| l.trim() != heading);
    assert!(lines.next().is_some(), "docs/schema.md has no `{heading}`");
    lines
        .take_while(|l| {
            let h = l.chars().take_while(|&c| c == '#').count();
            !(h > 0 && h <= level && l.chars().nth(h) == Some(' '))
        })
        .collect()
}

/// The backticked names in the first column of the table in `lines` whose
/// header's first cell is `first`.
fn table_keys(lines: &[&str], first: &str) -> BTreeSet<String> {
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no table with a `{first}` column"));
    let mut out = BTreeSet::new();
    for l in lines[start + 2..]
        .iter()
        .take_while(|l| l.trim_start().starts_with('|'))
    {
        let cell = l.split('|').nth(1).unwrap();
        for (i, part) in cell.split('`').enumerate() {
            if i % 2 == 1 {
                out.insert(part.to_string());
            }
        }
    }
    out
}

fn check(what: &str, documented: BTreeSet<String>, written: BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for k in written.difference(&documented) {
        problems.push(format!(
            "{what}: `{k}` is written but not in docs/schema.md"
        ));
    }
    for k in documented.difference(&written) {
        problems.push(format!(
            "{what}: `{k}` is in docs/schema.md but not written"
        ));
    }
    problems
}

/// (suite name, detail type) from the `each_suite!` list of the model.
fn suites() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(src("src/model/detail/mod.rs")).unwrap();
    let list = &text[text
        .find("\nmacro_rules! each_suite {")
        .expect("the each_suite! list")..];
    let list = &list[..list.find("\n}").unwrap()];
    let v: Vec<(String, String)> = list
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let (variant, rest) = l.split_once('(')?;
            let (ty, rest) = rest.split_once(')')?;
            let name = rest.split('"').nth(1)?;
            (!variant.starts_with("//")).then(|| (name.to_string(), ty.to_string()))
        })
        .collect();
    assert!(v.len() >= 8, "{v:?}");
    v
}

#[test]
fn the_schema_doc_lists_every_field_the_model_writes() {
    let doc = std::fs::read_to_string(src("docs/schema.md")).unwrap();
    let mut model = structs(&src("src/model"));
    model.extend(structs(&src("src/model/host")));
    let details = structs(&src("src/model/detail"));
    let mut problems = Vec::new();
    // The record's detail is written as `suite` and `extra`.
    let record: &[(&str, &[&str])] = &[("Detail", &["suite", "extra"])];
    for (heading, ty, flat) in [
        ("## Run (top level)", "Run", &[][..]),
        ("## Host", "Host", &[][..]),
        ("## Record", "Record", record),
    ] {
        problems.extend(check(
            ty,
            table_keys(&section(&doc, heading), "field"),
            keys(ty, &model, flat),
        ));
    }
    for (suite, ty) in suites() {
        let lines = section(&doc, &format!("### `{suite}`"));
        problems.extend(check(
            &format!("extra of {suite}"),
            table_keys(&lines, "key"),
            keys(&ty, &details, &[]),
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_a_missing_line() {
    let doc =
        "## Record\n\n| field | type |\n|---|---|\n| `a` | x |\n| `b`, `c` | y |\n\n## Next\n";
    let found = table_keys(&section(doc, "## Record"), "field");
    assert_eq!(found, ["a", "b", "c"].map(String::from).into());
    let written: BTreeSet<String> = ["a", "b", "d"].map(String::from).into();
    let p = check("T", found, written);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(p[0].contains("`d` is written but not"), "{p:?}");
    assert!(p[1].contains("`c` is in docs/schema.md but not"), "{p:?}");
}
