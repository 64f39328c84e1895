//! What a panic (a bug) prints. The standard hook, with `RUST_BACKTRACE`
//! set, holds the standard library's backtrace lock while it resolves
//! and writes the backtrace; under a `ulimit -v`/`-d` an allocation fails
//! meanwhile, and the default allocation-error hook then takes the same
//! lock to print its own backtrace: the process waited on itself for good
//! (seen with gdb at 9ebc8a4: `default_alloc_error_hook` in
//! `sys::backtrace::lock`), its SIGTERM only noted by bwscope's own
//! handler (issue 42, item 2). This hook says what panicked in one line
//! and captures a backtrace only where no address-space limit is set, so
//! it never holds that lock where an allocation may fail.

use std::io::Write;

/// Replace the standard panic hook (see the module's text). Decided once,
/// at start, so the hook itself reads no environment and no file.
pub fn install() {
    let asked = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    let limited = crate::os::process::address_space_left().is_some();
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        let at = info
            .location()
            .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        let thread = std::thread::current();
        // Written without a lock of ours and errors ignored: a panic while
        // stderr is closed must not panic again.
        let mut e = std::io::stderr();
        let _ = writeln!(
            e,
            "bwscope: internal error in thread '{}': {}{at}; this is a bug, please report it with the command line",
            thread.name().unwrap_or("?"),
            crate::util::text::one_line(what)
        );
        if asked && limited {
            let _ = writeln!(
                e,
                "(no backtrace: an address-space limit (ulimit -v/-d) is set, under which resolving one can fail and hang; run without it for one)"
            );
        } else if asked {
            let _ = writeln!(e, "{}", std::backtrace::Backtrace::force_capture());
        }
    }));
}
