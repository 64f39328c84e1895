//! Authentication and secrets: the HMAC answer to the server's challenge
//! and the kernel randomness behind nonces and test cookies.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::NONCE_LEN;

/// The label of a client's (a leader's, a rank's) answer.
const CLIENT: &[u8] = b"bwscope-net-auth-v1";
/// The label of a fleet rank 0's answer to a rank: another label, so an
/// answer can never be reflected from one direction into the other.
pub const SERVER_LABEL: &[u8] = b"bwscope-fleet-rank0-proof-v1";

fn keyed(token: &[u8], label: &[u8], nonce: &[u8; NONCE_LEN]) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(token).expect("HMAC accepts any key length");
    m.update(label);
    m.update(nonce);
    m
}

/// The answer to a challenge: HMAC-SHA256 keyed with the token over a
/// domain label and the server's nonce. The token itself never travels.
pub fn auth_mac(token: &[u8], nonce: &[u8; NONCE_LEN]) -> [u8; NONCE_LEN] {
    auth_mac_as(CLIENT, token, nonce)
}

/// [`auth_mac`] under another domain label.
pub fn auth_mac_as(label: &[u8], token: &[u8], nonce: &[u8; NONCE_LEN]) -> [u8; NONCE_LEN] {
    keyed(token, label, nonce).finalize().into_bytes().into()
}

/// Check an answer in constant time.
pub fn auth_ok(token: &[u8], nonce: &[u8; NONCE_LEN], mac: &[u8; NONCE_LEN]) -> bool {
    auth_ok_as(CLIENT, token, nonce, mac)
}

/// [`auth_ok`] under another domain label.
pub fn auth_ok_as(
    label: &[u8],
    token: &[u8],
    nonce: &[u8; NONCE_LEN],
    mac: &[u8; NONCE_LEN],
) -> bool {
    keyed(token, label, nonce).verify_slice(mac).is_ok()
}

/// Unpredictable bytes from the kernel (nonces, cookies).
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut a = [0u8; N];
    let mut filled = 0;
    while filled < N {
        // SAFETY: writes at most N - filled bytes into `a` from offset `filled`.
        let r = unsafe { libc::getrandom(a[filled..].as_mut_ptr().cast(), N - filled, 0) };
        if r > 0 {
            filled += r as usize;
        } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // getrandom cannot fail on Linux ≥ 3.17 with a valid buffer; as a
            // last resort mix the clock so a nonce is at least never constant.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let mut g = crate::util::rng::XorShift64::new(t ^ std::process::id() as u64);
            for b in &mut a[filled..] {
                *b = g.next_u64() as u8;
            }
            break;
        }
    }
    a
}
