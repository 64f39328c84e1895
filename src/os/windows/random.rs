//! `BCryptGenRandom` with the system's preferred generator.

use windows_sys::Win32::Security::Cryptography::{
    BCryptGenRandom, BCRYPT_USE_SYSTEM_PREFERRED_RNG,
};

pub fn fill(buf: &mut [u8]) -> std::io::Result<()> {
    for chunk in buf.chunks_mut(u32::MAX as usize) {
        // SAFETY: writes chunk.len() bytes into `chunk`.
        let st = unsafe {
            BCryptGenRandom(
                std::ptr::null_mut(),
                chunk.as_mut_ptr(),
                chunk.len() as u32,
                BCRYPT_USE_SYSTEM_PREFERRED_RNG,
            )
        };
        if st < 0 {
            return Err(std::io::Error::other(format!(
                "BCryptGenRandom failed (NTSTATUS {st:#x})"
            )));
        }
    }
    Ok(())
}
