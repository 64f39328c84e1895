//! What the history store hands back (`history::Store`), with the store
//! built from the input. The first byte picks how: the rest as the store
//! file itself (a damaged or hostile database: the open, the whole-store
//! check and every query must end in an answer or a warning, never a
//! panic), or as rows of a sound store, their text and figures taken from
//! the bytes (every string handed back is then clean and bounded, every
//! figure finite and within the run files' bounds, as the commands show
//! them).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use bwscope::history::{Filter, Mode, Store};
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        // On a memory file system where there is one: a store's commits
        // sync, and a disk's syncs would make this a dozen runs a second.
        let base = match std::path::Path::new("/dev/shm") {
            p if p.is_dir() => p.to_path_buf(),
            _ => std::env::temp_dir(),
        };
        let d = base.join(format!("bwscope-fuzz-hist-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        bwscope::os::fs::set_permissions(&d, 0o700).unwrap();
        d
    })
}

fn clean(s: &str) {
    assert!(!s.chars().any(bwscope::util::text::is_hostile), "{s:?}");
    assert!(!s.contains('\n') && s.chars().count() <= 255, "{s:?}");
}

fn figure(v: f64, unit: &str) {
    let max = bwscope::model::plausible::max_for_unit(unit);
    assert!(v.is_finite() && (0.0..=max).contains(&v), "{v} {unit}");
}

/// Everything a command asks of a store, checked as the commands show it.
fn read_all(s: &Store) {
    if s.verify().is_err() {
        return;
    }
    if let Ok(runs) = s.runs(&Filter::default()) {
        for r in &runs {
            for t in [
                &r.started_at,
                &r.command,
                &r.tool_version,
                &r.machine,
                &r.cpu,
                &r.source,
            ] {
                clean(t);
            }
        }
    }
    let Ok(cases) = s.cases(None) else {
        return;
    };
    for c in cases.iter().take(8) {
        clean(&c.case);
        if let Ok(pts) = s.series(&c.case, None) {
            for p in &pts {
                clean(&p.unit);
                clean(&p.flags);
                figure(p.value, &p.unit);
                if let Some(m) = p.median {
                    figure(m, &p.unit);
                }
            }
        }
    }
    if let Ok(past) = s.fleet_past("F", "9999-12-31T00:00:00Z", 10) {
        for r in &past {
            for n in &r.nodes {
                clean(&n.node);
                for (m, v) in &n.figures {
                    clean(m);
                    assert!(v.is_finite() && *v >= 0.0, "{m} {v}");
                }
            }
        }
    }
}

/// The bytes as words and figures: NUL-separated text, and every 8 bytes
/// as a float (infinities, NaN and 1e308 included).
fn pieces(data: &[u8]) -> (Vec<String>, Vec<f64>) {
    let words = data
        .split(|&b| b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let floats = data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (words, floats)
}

fn rows_of(path: &std::path::Path, data: &[u8]) -> rusqlite::Result<()> {
    let (w, f) = pieces(data);
    let word = |i: usize| w.get(i % w.len().max(1)).cloned().unwrap_or_default();
    let num = |i: usize| f.get(i).copied().unwrap_or(1.0);
    let mut c = rusqlite::Connection::open(path)?;
    let c = c.transaction()?;
    c.execute(
        "INSERT INTO runs (uid, started_at, recorded_at, command, tool_version, options,
            complete, source, machine, cpu_vendor, cpu_model_name, cpu_family, cpu_model,
            cpu_stepping, physical_cores, caches, kernel)
         VALUES (?1, ?2, ?2, ?3, ?4, '{}', 1, ?5, ?6, 'v', ?7, 1, 2, 3, 4, '[]', ?8)",
        rusqlite::params![
            word(0),
            word(1),
            word(2),
            word(3),
            word(4),
            word(5),
            word(6),
            word(7)
        ],
    )?;
    let run = c.last_insert_rowid();
    for k in 0..3 {
        c.execute(
            "INSERT OR IGNORE INTO cases (key, suite, kernel, op, threads, unit, higher_is_better)
             VALUES (?1, 'cache', 'k', 'read', 1, ?2, 1)",
            rusqlite::params![word(8 + k), word(11 + k)],
        )?;
        c.execute(
            "INSERT INTO rows (run_id, case_id, best, median, noisy, flags, status)
             VALUES (?1, (SELECT id FROM cases WHERE key = ?2), ?3, ?4, 0, ?5, 'ok')",
            rusqlite::params![run, word(8 + k), num(2 * k), num(2 * k + 1), word(14 + k)],
        )?;
        c.execute(
            "INSERT INTO fleet_figures (run_id, fleet, fleet_run, fleet_started_at, node,
                metric, value) VALUES (?1, 'F', ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                run,
                word(17),
                word(1),
                word(18 + k),
                word(21 + k),
                num(6 + k)
            ],
        )?;
    }
    c.commit()
}

fuzz_target!(|data: &[u8]| {
    let Some((&how, rest)) = data.split_first() else {
        return;
    };
    let path = dir().join("h.sqlite3");
    for side in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{side}", path.display()));
    }
    if how & 1 == 0 {
        let Ok(mut f) = bwscope::os::fs::create_new(&path, 0o600) else {
            return;
        };
        use std::io::Write as _;
        if f.write_all(rest).is_err() {
            return;
        }
        drop(f);
    } else {
        match Store::open(&path, Mode::Create) {
            Ok(Some(s)) => drop(s),
            _ => return,
        }
        if rows_of(&path, rest).is_err() {
            return;
        }
    }
    if let Ok(Some(mut s)) = Store::open(&path, Mode::Existing) {
        read_all(&s);
        if how & 2 != 0 {
            if let Ok(t) = bwscope::util::date::parse_instant("2026-01-01") {
                let _ = s.forget_before(t);
            }
        }
    }
});
