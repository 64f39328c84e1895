//! The operating system, behind one portable surface: the only layer that
//! calls it.
//!
//! Everything bwscope asks of the system — clocks, cpu affinity and
//! topology, memory mappings and their page facts, NUMA placement, the
//! process team's primitives, stop signals, files that cannot be turned
//! against their writer, sockets, the system's own description of itself
//! — is a function or type of one module here. Above this layer no code
//! names `libc`, `windows_sys`, `std::os::{unix,windows,fd}` or
//! `cfg(unix | windows | target_os)` (`tests/layers.rs` checks it), and no
//! code spells a `/proc`, `/sys` or `/dev` path: suites, kernels, the
//! report and the model ask this layer what the system offers
//! (`mem::huge_page_mode`, `signal`, …) and get a reason where it offers nothing.
//!
//! Layout: each concern is a portable module here (`time`, `cpu`, `mem`,
//! …) holding its types, its documentation and the functions every
//! system shares; each system's own calls are in its folder (`linux/`,
//! `windows/`, `macos/`), chosen once below as `imp`. Parsers of what a
//! system writes (`/proc` text, sysfs trees, firmware blobs) are pure and
//! in `parse/`, built on every target so they are tested with captured
//! data anywhere.
//!
//! The layer may name the model (it returns the host facts the model
//! defines), `util` and `error`; every other layer may name it.

#[cfg(target_os = "linux")]
#[path = "linux/mod.rs"]
mod imp;

#[cfg(windows)]
#[path = "windows/mod.rs"]
mod imp;

#[cfg(target_os = "macos")]
#[path = "macos/mod.rs"]
mod imp;

pub mod cpu;
pub mod crt;
pub mod device;
pub mod fds;
pub mod fs;
pub mod input;
pub mod mem;
pub mod net;
pub mod numa;
pub mod parse;
pub mod process;
pub mod random;
pub mod signal;
pub mod stack;
pub mod system;
pub mod team;
pub mod tiers;
pub mod time;
