//! `getentropy(2)`: the kernel's generator, at most 256 bytes a call.

pub fn fill(buf: &mut [u8]) -> std::io::Result<()> {
    for chunk in buf.chunks_mut(256) {
        // SAFETY: writes chunk.len() (≤ 256) bytes into `chunk`.
        if unsafe { libc::getentropy(chunk.as_mut_ptr().cast(), chunk.len()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
