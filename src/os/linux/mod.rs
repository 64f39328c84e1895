//! Linux: the one implementation of the surface in `os` today. Each file
//! is one concern of the portable module of the same name.

pub mod cpu;
pub mod crt;
pub mod device;
pub mod fds;
pub mod fs;
pub mod mem;
pub mod net;
pub mod numa;
pub mod process;
pub mod random;
pub mod signal;
pub mod system;
pub mod team;
pub mod tiers;
pub mod time;
